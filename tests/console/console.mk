# The console tests (tests/console/) drive Debian's chromium through Playwright (its pip
# package is in the lock; it never downloads a browser build of its own).
CHROMIUM ?= /usr/bin/chromium
TEST_PREREQS += console-browser

.PHONY: console-browser
console-browser:
	@test -x $(CHROMIUM) || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; }
