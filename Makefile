# Everyday commands. `go run ./cmd/caduceus serve` and `go test ./...` need
# none of this: the UI bundle is committed. Node is needed only to change
# the UI.

.PHONY: run test test-unit test-e2e-api test-e2e-processes test-e2e-cluster test-e2e-browser browser postgres iproute peers ui ui-check

run:
	go run ./cmd/caduceus serve

# The whole suite (go test -race -count=1 of every package), reported as it
# goes: the unit tests and the four acceptance packages (e2e/README.md)
# run as five go test processes side by side, each printing a line per
# package as it ends and a line per top-level test slower than
# $(SLOW) (e2e/progress condenses go test -json; a failing test prints
# its whole output). At the end, the $(SLOWEST) slowest tests. The browser
# tests drive Debian's chromium and the PostgreSQL store's tests (the store
# conformance suite, journal, runner, app) start a throwaway PostgreSQL
# server of Debian's; the cluster test (e2e/cluster) needs root and
# iproute2 for network namespaces; all skip without them unless CI=true, so
# `make test` installs them first.
#
# Everything but e2e/processes and e2e/cluster runs niced: the runner processes those tests
# start must renew their lease in time, so they get the CPU first (on a
# loaded machine a starved runner lost its lease in TestRunnerSIGTERMHandsOver;
# the processes the tests start hold leases of e2etest.ProcLease, 4 s).
# The acceptance packages take 4-6 minutes alone beside each other; on a
# loaded machine a slow run should finish rather than hit go test's
# 10-minute default.
GOTEST   = go test -race -count=1 -json -timeout 20m
SLOW    ?= 10s
SLOWEST ?= 10
TIMES    = bin/test-times.txt
PROGRESS = bin/progress -slow $(SLOW) -record $(TIMES)

test: browser postgres iproute peers
	@mkdir -p bin && go build -o bin/progress ./e2e/progress && rm -f $(TIMES)
	@# The packages the tests share are compiled once, here, rather than
	@# by the five go test processes at once (./internal/... links nothing).
	@go build -race ./internal/...
	@start=$$(date +%s); \
	$(MAKE) --no-print-directory -k -j5 test-unit test-e2e-api test-e2e-processes test-e2e-cluster test-e2e-browser; status=$$?; \
	echo "== slowest tests"; sort -rn $(TIMES) | head -n $(SLOWEST) | awk -F'\t' '{ printf "%8.1fs  %s %s\n", $$1, $$2, $$3 }'; \
	echo "== make test: $$(( $$(date +%s) - start ))s"; exit $$status

# Everything but the acceptance packages (go list is the source of truth,
# so a new package is never left out).
test-unit:
	@nice -n 10 $(GOTEST) $$(go list ./... | grep -v -e /e2e/api -e /e2e/processes -e /e2e/cluster -e /e2e/browser) | $(PROGRESS)

test-e2e-api:
	@nice -n 10 $(GOTEST) ./e2e/api/ | $(PROGRESS)

test-e2e-processes:
	@$(GOTEST) ./e2e/processes/ | $(PROGRESS)

# Web nodes and runners on one PostgreSQL server, the runners in network
# namespaces of their own (root; skips without it unless CI=true). Not
# niced, for the same reason as e2e/processes: its runners renew a lease (clusterLease).
test-e2e-cluster:
	@$(GOTEST) ./e2e/cluster/ | $(PROGRESS)

test-e2e-browser:
	@nice -n 10 $(GOTEST) ./e2e/browser/ | $(PROGRESS)

# Debian's chromium for the browser tests, installed when missing (also
# under CI=true without a terminal). The version is read from the binary
# itself: the /usr/bin/chromium wrapper script prints shell errors.
browser:
	@[ -x /usr/lib/chromium/chromium ] || command -v chromium >/dev/null 2>&1 || { \
	  echo "installing Debian's chromium for the browser tests"; \
	  SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium >/dev/null; }
	@if [ -x /usr/lib/chromium/chromium ]; then /usr/lib/chromium/chromium --version; else chromium --version 2>/dev/null; fi

# Debian's PostgreSQL server binaries, installed when missing (also under
# CI=true without a terminal). The tests run their own server from
# /usr/lib/postgresql/<version>/bin (internal/store/postgres/pgtest), not
# the cluster the package may set up.
postgres:
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || { \
	  echo "installing Debian's PostgreSQL for the store tests"; \
	  SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq postgresql >/dev/null; }
	@"$$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)/postgres" --version

# iproute2's ip, with which the cluster test (e2e/cluster) puts runners in
# network namespaces of their own, installed when missing.
iproute:
	@command -v ip >/dev/null 2>&1 || { \
	  echo "installing Debian's iproute2 for the cluster test"; \
	  SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq iproute2 >/dev/null; }

# The real third-party programs tests talk to (e2e/peers/package.json: the
# reference MCP servers from npm, run with node over stdio by
# internal/mcp's tests), installed with npm ci when missing or changed.
peers: e2e/peers/node_modules

e2e/peers/node_modules: e2e/peers/package.json e2e/peers/package-lock.json
	cd e2e/peers && npm ci --no-audit --no-fund
	@touch e2e/peers/node_modules

# Rebuild the browser workbench into internal/web/dist (commit the result).
ui: ui/node_modules
	cd ui && npx tsc --noEmit -p . && node build.mjs

# Fail when the committed bundle is not what the sources build to.
ui-check: ui/node_modules
	cd ui && npx tsc --noEmit -p . && node build.mjs --check

ui/node_modules: ui/package.json ui/package-lock.json
	cd ui && npm ci --no-audit --no-fund
	@touch ui/node_modules
