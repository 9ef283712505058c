"""The closing report of a resilience run: what each part measured, printed at the end of
the run among the closing sections of tests/conftest.py (pytest's terminal summary)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Fault:
    name: str
    started: float  # seconds since the load started
    ended: float
    note: str = ""

    def line(self) -> str:
        return (
            f"{self.name:<28} {self.started:7.1f}s → {self.ended:7.1f}s ({self.ended - self.started:4.1f}s){self.note}"
        )


@dataclass
class Report:
    profile: str = ""
    # Faults under load.
    figures: dict[str, int | str] = field(default_factory=dict)
    faults: list[Fault] = field(default_factory=list)
    # Anything else worth a line: per part, in the order it was said.
    sections: dict[str, list[str]] = field(default_factory=dict)

    def add(self, section: str, line: str) -> None:
        self.sections.setdefault(section, []).append(line)

    def lines(self) -> list[str]:
        out = [f"profile: {self.profile}"]
        if self.figures:
            out.append("faults under load:")
            out.extend(f"  {name:<44} {value}" for name, value in self.figures.items())
        if self.faults:
            out.append("faults injected (seconds since the load started):")
            out.extend("  " + fault.line() for fault in self.faults)
        for section, lines in self.sections.items():
            out.append(f"{section}:")
            out.extend("  " + line for line in lines)
        return out


REPORT = Report()
