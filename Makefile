# Everyday commands. `go run ./cmd/caduceus serve` and `go test ./...` need
# none of this: the UI bundle is committed. Node is needed only to change
# the UI.

.PHONY: run test browser ui ui-check

run:
	go run ./cmd/caduceus serve

# The whole suite. The browser tests drive Debian's chromium; they skip
# without it unless CI=true, so `make test` installs it first.
test: browser
	go test -race -count=1 ./...

browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  echo "installing Debian's chromium for the browser tests"; \
	  SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium >/dev/null; }
	@chromium --version

# Rebuild the browser workbench into internal/web/dist (commit the result).
ui: ui/node_modules
	cd ui && npx tsc --noEmit -p . && node build.mjs

# Fail when the committed bundle is not what the sources build to.
ui-check: ui/node_modules
	cd ui && npx tsc --noEmit -p . && node build.mjs --check

ui/node_modules: ui/package.json ui/package-lock.json
	cd ui && npm ci --no-audit --no-fund
	@touch ui/node_modules
