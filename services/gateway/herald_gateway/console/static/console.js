// Herald console: live regions and confirmations. No framework, no build step.
// A [data-live] region is re-fetched from its URL (a server-rendered, escaped fragment)
// every 2 s while the server says something in it is in flight, every 10 s otherwise,
// and not at all while the tab is hidden.
"use strict";

function follow(region) {
  let timer = null;
  const schedule = () => {
    clearTimeout(timer);
    const delay = region.dataset.inFlight === "1" ? 2000 : 10000;
    timer = setTimeout(refresh, delay);
  };
  const refresh = async () => {
    if (document.hidden) { schedule(); return; }
    try {
      const answer = await fetch(region.dataset.live, {
        headers: { "x-console-fragment": "1" },
        credentials: "same-origin",
        cache: "no-store",
      });
      if (answer.status === 401) { window.location.reload(); return; }
      if (answer.ok) {
        const markup = await answer.text();
        if (markup !== region.innerHTML) {
          region.innerHTML = markup;
        }
        region.dataset.inFlight = answer.headers.get("x-in-flight") || "0";
        region.dataset.refreshed = String(Date.now());
      }
    } catch (error) {
      // The gateway is unreachable for a moment: try again on the next tick.
    }
    schedule();
  };
  schedule();
}

// A [data-copy] button copies the text of the element it names (a secret shown once) to the clipboard.
function copyButton(button) {
  button.hidden = false;
  button.addEventListener("click", async () => {
    const source = document.getElementById(button.dataset.copy);
    try {
      await navigator.clipboard.writeText(source.textContent);
      button.textContent = "Copied";
    } catch (error) {
      // No clipboard (an insecure origin, or refused): select the text for Ctrl-C instead.
      window.getSelection().selectAllChildren(source);
      button.textContent = "Selected: press Ctrl-C";
    }
  });
}

document.addEventListener("DOMContentLoaded", () => {
  document.querySelectorAll("[data-live]").forEach(follow);
  document.querySelectorAll("button[data-copy]").forEach(copyButton);
  document.addEventListener("submit", (event) => {
    const question = event.target.dataset ? event.target.dataset.confirm : undefined;
    if (question && !window.confirm(question)) {
      event.preventDefault();
    }
  });
});
