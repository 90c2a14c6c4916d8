# Storefront: a GraphQL storefront backend. `make run` and `make test` are the two commands a newcomer needs.
GO ?= go

.PHONY: run test test-race test-e2e test-galera test-browser bench generate check-generated lint build

run: ## serve the demo catalog on the embedded SQLite default (http://127.0.0.1:8080)
	$(GO) run ./cmd/storefront serve --demo

test: ## the whole suite; MariaDB tests run when STOREFRONT_TEST_MYSQL_DSN is set (NATS and node tests likewise: docs/operations.md)
	$(GO) test -count=1 -timeout 30m ./...

test-race:
	$(GO) test -race -count=1 ./...

test-e2e: ## end-to-end tests against the real binary, fault tests included (they stop and freeze the local MariaDB: run alone)
	$(GO) test -tags fault -count=1 -v ./e2e/

GALERA_RUN ?= ^TestGalera
test-galera: ## one instance per node of a 3-node MariaDB Galera cluster (start it with scripts/galera.sh up; docs/operations.md)
	$(GO) test -tags galera -count=1 -timeout 30m -v -run '$(GALERA_RUN)' ./e2e/

test-browser: ## the shop and the admin console in headless chromium (install it with: bash .ci/browser-deps.sh)
	$(GO) test -count=1 -run 'Browser|AdminConsole' -v ./e2e/

bench: ## benchmarks with their anchors (docs/benchmarks.md); STOREFRONT_BENCH_DB='mysql:DSN' runs the checkout table on MariaDB
	$(GO) test -run='^$$' -bench=. -benchmem ./skumatrix/
	$(GO) test -run='^$$' -bench='ProductPage' -benchtime=1s ./bench/
	$(GO) test -run='^$$' -bench='ResponseCache' -benchtime=1x ./bench/
	$(GO) run ./bench/checkout

build:
	$(GO) build -o bin/storefront ./cmd/storefront

generate: ## regenerate ent and gqlgen code (ent first)
	$(GO) generate ./...

check-generated: generate ## fail when generated code is out of date
	@test -z "$$(git status --porcelain -- ent graph resolvers go.mod go.sum)" || { git status --porcelain -- ent graph resolvers go.mod go.sum; echo 'generated code is out of date: run make generate and commit'; exit 1; }

lint:
	$(GO) vet ./...
