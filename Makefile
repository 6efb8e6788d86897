# purser: `make run` starts the local stack, `make test` runs every test (README).
# Switches: ASAN=1 (AddressSanitizer + UBSan build in build/asan), VALGRIND=1 (with test:
# C tests and purser-fcgi under valgrind).

ifeq ($(ASAN),1)
BUILD := build/asan
SANITIZE := -fsanitize=address,undefined -fno-omit-frame-pointer
else
BUILD := build
SANITIZE :=
endif

CC ?= cc
PKGS := jansson yaml-0.1 libmariadb libcrypto libpcre2-8 libgit2 cjose libcurl
# Nothing that depends on a package is evaluated when make reads this file: on a fresh machine
# the packages arrive with `deps`. PKG_CFLAGS and PKG_LIBS run pkg-config the first time a
# recipe needs them (after deps), then keep the answer.
PKG_CFLAGS = $(eval PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS)))$(PKG_CFLAGS)
PKG_LIBS = $(eval PKG_LIBS := $(shell pkg-config --libs $(PKGS)))$(PKG_LIBS)
CFLAGS ?= -O2 -g
CFLAGS += -std=gnu11 -Wall -Wextra -Wshadow -Wformat=2 -Werror -D_GNU_SOURCE $(SANITIZE) -Ilib \
          $(PKG_CFLAGS)
LDFLAGS += $(SANITIZE)
LDLIBS = $(PKG_LIBS) -lfcgi -lm

# lib/ by subsystem, each folder using only those before it (tools/layers checks the includes).
LIB_SRC := $(sort $(wildcard lib/*/*.c))
# purserctl, the HTTPS client: client/ links lib/ (codecs, Chef signing) and libcurl, not fcgi/
CLIENT_SRC := $(sort $(wildcard client/*.c))
CLIENT_OBJ := $(CLIENT_SRC:%.c=$(BUILD)/%.o)
CURL_CFLAGS = $(eval CURL_CFLAGS := $(shell pkg-config --cflags libcurl))$(CURL_CFLAGS)
CURL_LIBS = $(eval CURL_LIBS := $(shell pkg-config --libs libcurl))$(CURL_LIBS)
FCGI_SRC := $(sort $(wildcard fcgi/*.c))
TEST_SRC := $(sort $(wildcard t/[0-9]*.c))
SQL := $(sort $(wildcard sql/*.sql))

LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/%.o) $(BUILD)/migrations.o
FCGI_OBJ := $(FCGI_SRC:%.c=$(BUILD)/%.o)
TESTS := $(TEST_SRC:t/%.c=$(BUILD)/t/%.t)

STATE ?= var

.PHONY: all deps ready build run stop test clean install install-files install-owner fuzz fuzz-build style format \
        manual manual-ref
.SECONDARY:
all: build

DEPS ?= tools/deps
deps:
	@$(DEPS)

# deps, then the build in a make of its own: that make reads this file once the packages are
# there (t/0006-fresh-build.t holds this with a pkg-config that knows nothing before deps).
# It compiles on every core (BUILD_JOBS; `make -jN ready` passes its own N down instead).
BUILD_JOBS ?= $(shell nproc)
ready: deps
	@$(MAKE) --no-print-directory $(if $(filter -j%,$(MAKEFLAGS)),,-j$(BUILD_JOBS)) build manual

build: $(BUILD)/layers.ok $(BUILD)/purser-fcgi $(BUILD)/purser $(BUILD)/purserctl $(TESTS)

# The build fails when a lower folder of lib/ includes a higher one (the order is in tools/layers).
$(BUILD)/layers.ok: tools/layers $(wildcard lib/*/*.c lib/*/*.h)
	@mkdir -p $(dir $@)
	tools/layers && touch $@

$(BUILD)/%.o: %.c $(wildcard lib/*/*.h fcgi/*.h t/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

$(BUILD)/migrations.c: $(SQL) tools/embed-sql
	@mkdir -p $(dir $@)
	tools/embed-sql $(SQL) > $@.tmp && mv $@.tmp $@

$(BUILD)/migrations.o: $(BUILD)/migrations.c lib/store/migrate.h
	$(CC) $(CFLAGS) -c -o $@ $<

# The OpenAPI document's components (schemas, parameters), which GET /docs joins to the route table.
$(BUILD)/openapi.c: fcgi/openapi.yaml tools/embed-text
	@mkdir -p $(dir $@)
	tools/embed-text openapi_components fcgi/openapi.yaml > $@.tmp && mv $@.tmp $@

$(BUILD)/openapi.o: $(BUILD)/openapi.c
	$(CC) $(CFLAGS) -c -o $@ $<

$(BUILD)/libpurser.a: $(LIB_OBJ)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/purser-fcgi: $(FCGI_OBJ) $(BUILD)/openapi.o $(BUILD)/libpurser.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# The purser command checks the route table against the RBAC policy: it links the table
# (compiled without handlers) and the router, not the web layer's handlers.
$(BUILD)/fcgi/routes-table.o: fcgi/routes.c $(wildcard lib/*/*.h fcgi/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -DROUTES_TABLE_ONLY -c -o $@ $<

$(BUILD)/purser: $(BUILD)/tools/purser.o $(BUILD)/tools/purser_backup.o $(BUILD)/tools/purser_git.o $(BUILD)/tools/purser_keys.o $(BUILD)/fcgi/routes-table.o $(BUILD)/fcgi/router.o \
                 $(BUILD)/fcgi/url.o $(BUILD)/libpurser.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/client/%.o: client/%.c $(wildcard client/*.h lib/*/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(CURL_CFLAGS) -c -o $@ $<

$(BUILD)/purserctl: $(CLIENT_OBJ) $(BUILD)/libpurser.a
	$(CC) $(LDFLAGS) -o $@ $^ $(CURL_LIBS) $(LDLIBS)

$(BUILD)/t/%.t: $(BUILD)/t/%.o $(BUILD)/libpurser.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# unit tests of the web layer's pure parts link those objects, before the library they use
$(BUILD)/t/0070-url.t: $(BUILD)/t/0070-url.o $(BUILD)/fcgi/url.o $(BUILD)/libpurser.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)
$(BUILD)/t/0071-links.t: $(BUILD)/t/0071-links.o $(BUILD)/fcgi/links.o $(BUILD)/fcgi/routes-table.o \
                         $(BUILD)/fcgi/router.o $(BUILD)/fcgi/url.o $(BUILD)/libpurser.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# The manual (docs/): each page to HTML by pandoc, then every link checked (tools/manual); the
# stack's nginx serves $(BUILD)/manual at /manual/, the package installs it in $(DOCDIR)/manual.
# make manual-ref writes docs/reference/ again from the code (a stack of its own; t/9013 fails
# when a committed page and its source disagree).
MANUAL_SRC := $(wildcard docs/*.md docs/*/*.md docs/assets/* t/browser/screenshots/*.png)
$(BUILD)/manual/index.html: $(MANUAL_SRC) tools/manual tools/manual-links
	tools/manual build $(BUILD)/manual
	tools/manual check $(BUILD)/manual > /dev/null

manual: $(BUILD)/manual/index.html

manual-ref: build
	PURSER_BUILD=$(BUILD) tools/manual-ref

# make run DEVELOPMENT=1: development mode (SPEC §3), unauthenticated loopback requests act as
# a server admin, as Deckhand's development mode does.
run: ready
	@PURSER_BUILD=$(BUILD) PURSER_DEVELOPMENT=$(if $(DEVELOPMENT),1,0) tools/stack start $(STATE)
	@echo "stack state in $(STATE)/; settings in $(STATE)/stack.env; stop it with: make stop"

stop:
	@tools/stack stop $(STATE)

# prove runs the C unit tests (executables) and then the Perl tests, which start their own
# stack in a temporary folder. PURSER_POOL_CHECK=1: a jansson value kept past its request
# crashes the worker (lib/base/json_pool.h), which the tests report.
TEST_ENV := PURSER_BUILD=$(BUILD) PURSER_POOL_CHECK=1
ifeq ($(ASAN),1)
TEST_ENV += PURSER_ASAN=1
endif
ifeq ($(VALGRIND),1)
TEST_ENV += TAP_VALGRIND=1 PURSER_VALGRIND=1
endif
PROVE ?= prove
PROVE_FLAGS ?= --timer
# Two test files at a time (t/schedule's `long` ones first, then its `first` ones), but those
# it names `serial` or `long-alone`: they run alone, after, in its order; QUICK=1 leaves the
# long ones out (a developer's loop; .ci/run runs everything).
JOBS ?= 2
NAMED = $(shell awk '$$1 ~ /^(first|long|long-alone|serial)$$/ { print $$2 }' t/schedule)
FIRST = $(shell awk '($$1 == "long" && "$(QUICK)" != "1") || $$1 == "first" { print $$2 }' t/schedule)
ALONE_RUN = $(shell awk '$$1 == "serial" || ($$1 == "long-alone" && "$(QUICK)" != "1") { print $$2 }' t/schedule)

test: ready
	@$(MAKE) --no-print-directory $(if $(filter -j%,$(MAKEFLAGS)),,-j$(BUILD_JOBS)) fuzz-build
	@rm -rf $(BUILD)/test-output/openapi # this run's checks against /docs (t/9999 adds them up)
	@rm -rf $(BUILD)/test-template # the datadir the stacks copy: made again by this run's first
	$(TEST_ENV) $(PROVE) -j$(JOBS) $(PROVE_FLAGS) $(FIRST) $(TESTS) $(filter-out $(NAMED),$(sort $(wildcard t/[0-9]*.t))); \
	rc=$$?; $(TEST_ENV) $(PROVE) $(PROVE_FLAGS) $(ALONE_RUN) || rc=1; exit $$rc

# make install [DESTDIR=...] [PREFIX=/usr/local]: a production install (docs/operator/install.md):
# the programs, the admin pages, the default policy, an example configuration, the nginx
# site and its snippets, the systemd unit and its user. What an operator edits (the
# configuration, the policy, the nginx site) is not overwritten when it is already there.
PREFIX ?= /usr/local
SYSCONFDIR ?= /etc
UNITDIR ?= $(SYSCONFDIR)/systemd/system
SYSUSERSDIR ?= $(SYSCONFDIR)/sysusers.d
# the unit's RuntimeDirectory: the sockets of purser-fcgi and nchan
RUNDIR ?= /run/purser
BINDIR := $(PREFIX)/bin
SBINDIR := $(PREFIX)/sbin
SHAREDIR := $(PREFIX)/share/purser
DOCDIR := $(PREFIX)/share/doc/purser
MANDIR := $(PREFIX)/share/man
SUBST = sed -e 's|@BINDIR@|$(BINDIR)|g' -e 's|@SBINDIR@|$(SBINDIR)|g' \
            -e 's|@SHAREDIR@|$(SHAREDIR)|g' -e 's|@DOCDIR@|$(DOCDIR)|g' \
            -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' -e 's|@RUNDIR@|$(RUNDIR)|g'
# install-if-absent MODE SOURCE TARGET
KEEP = install_keep() { if [ -e "$$3" ]; then echo "install: keeping $$3"; \
                        else install -m "$$1" "$$2" "$$3"; fi; }; install_keep

# install builds the programs only, after the runtime and build packages (tools/deps --build:
# none of the test or benchmark tools), then sets the owner of what purser-fcgi reads.
install:
	@$(DEPS) --build
	@$(MAKE) --no-print-directory install-files
	@$(MAKE) --no-print-directory install-owner

# The manual pages, written by help2man from each program's --help and --version (so that they
# say what the program says): purser and purserctl in section 1 (/usr/bin), purser-fcgi in 8.
MANS := $(BUILD)/man/purser.1 $(BUILD)/man/purserctl.1 $(BUILD)/man/purser-fcgi.8
$(BUILD)/man/purser.1: $(BUILD)/purser dist/man/purser.h2m
	@mkdir -p $(dir $@)
	help2man -N -s 1 -n "set up and look after a purser server: migrations, organizations, users, keyring, export, backup" -i dist/man/purser.h2m -o $@ $<
$(BUILD)/man/purserctl.1: $(BUILD)/purserctl dist/man/purserctl.h2m
	@mkdir -p $(dir $@)
	help2man -N -s 1 -n "the client of purser, for people and scripts" -i dist/man/purserctl.h2m -o $@ $<
$(BUILD)/man/purser-fcgi.8: $(BUILD)/purser-fcgi dist/man/purser-fcgi.h2m
	@mkdir -p $(dir $@)
	help2man -N -s 8 -n "the FastCGI server of purser" -i dist/man/purser-fcgi.h2m -o $@ $<

install-files: $(BUILD)/purser-fcgi $(BUILD)/purser $(BUILD)/purserctl $(MANS) $(BUILD)/manual/index.html
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(SBINDIR) $(DESTDIR)$(SHAREDIR)/policies \
	  $(DESTDIR)$(DOCDIR)/examples $(DESTDIR)$(SYSCONFDIR)/purser \
	  $(DESTDIR)$(SYSCONFDIR)/nginx/sites-available $(DESTDIR)$(SYSCONFDIR)/nginx/snippets \
	  $(DESTDIR)$(UNITDIR) $(DESTDIR)$(SYSUSERSDIR)
	install -m 755 $(BUILD)/purser $(DESTDIR)$(BINDIR)/purser
	install -m 755 $(BUILD)/purserctl $(DESTDIR)$(BINDIR)/purserctl
	install -d $(DESTDIR)$(PREFIX)/share/bash-completion/completions
	$(BUILD)/purserctl completion bash > $(DESTDIR)$(PREFIX)/share/bash-completion/completions/purserctl
	install -m 755 $(BUILD)/purser-fcgi $(DESTDIR)$(SBINDIR)/purser-fcgi
	install -d $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man8
	install -m 644 $(BUILD)/man/purser.1 $(BUILD)/man/purserctl.1 $(DESTDIR)$(MANDIR)/man1/
	install -m 644 $(BUILD)/man/purser-fcgi.8 $(DESTDIR)$(MANDIR)/man8/
	rm -rf $(DESTDIR)$(SHAREDIR)/admin && cp -R nginx/admin $(DESTDIR)$(SHAREDIR)/admin
	chmod -R u=rwX,go=rX $(DESTDIR)$(SHAREDIR)/admin
	install -m 644 policies/default.yaml $(DESTDIR)$(SHAREDIR)/policies/default.yaml
	install -m 644 README.md $(DESTDIR)$(DOCDIR)/README.md
	rm -rf $(DESTDIR)$(DOCDIR)/manual && cp -R $(BUILD)/manual $(DESTDIR)$(DOCDIR)/manual
	chmod -R u=rwX,go=rX $(DESTDIR)$(DOCDIR)/manual
	install -d $(DESTDIR)$(DOCDIR)/examples/monitoring
	install -m 644 dist/monitoring/purser-dashboard.json dist/monitoring/purser.rules.yml \
	  $(DESTDIR)$(DOCDIR)/examples/monitoring/
	install -d $(DESTDIR)$(SHAREDIR)/sql
	install -m 644 $(SQL) $(DESTDIR)$(SHAREDIR)/sql/
	$(SUBST) dist/purser.yaml.in > $(DESTDIR)$(DOCDIR)/examples/purser.yaml
	$(SUBST) nginx/purser-site.conf.in > $(DESTDIR)$(DOCDIR)/examples/nginx-site.conf
	$(SUBST) dist/purser-fcgi.service.in > $(DESTDIR)$(UNITDIR)/purser-fcgi.service
	chmod 644 $(DESTDIR)$(UNITDIR)/purser-fcgi.service
	install -m 644 dist/purser.sysusers $(DESTDIR)$(SYSUSERSDIR)/purser.conf
	install -m 644 nginx/fastcgi-purser.params $(DESTDIR)$(SYSCONFDIR)/nginx/snippets/purser-fastcgi.conf
	sed -e 's|@GIT_ROOT@|/var/lib/purser/git|g' -e 's|@FCGIWRAP_SOCKET@|/run/fcgiwrap.socket|g' \
	  nginx/git-backend.conf.in > $(DESTDIR)$(SYSCONFDIR)/nginx/snippets/purser-git.conf
	tools/watch-locations $(RUNDIR)/nchan.sock > $(DESTDIR)$(SYSCONFDIR)/nginx/snippets/purser-watch.conf
	@$(KEEP) 640 $(DESTDIR)$(DOCDIR)/examples/purser.yaml $(DESTDIR)$(SYSCONFDIR)/purser/purser.yaml
	@$(KEEP) 644 policies/default.yaml $(DESTDIR)$(SYSCONFDIR)/purser/policy.yaml
	@$(KEEP) 644 $(DESTDIR)$(DOCDIR)/examples/nginx-site.conf $(DESTDIR)$(SYSCONFDIR)/nginx/sites-available/purser
	@echo "installed under $(DESTDIR)$(PREFIX) and $(DESTDIR)$(SYSCONFDIR); next: README, Production"

# The user purser-fcgi runs as, and the group that lets it read the configuration (root:purser
# 640: purser reads it, only root changes it); the keyring and db-password when there. Done on
# the host itself only (no DESTDIR: a package's maintainer script does it, debian/purser.postinst).
install-owner:
	@if [ -n "$(DESTDIR)" ] || [ "$$(id -u)" != 0 ]; then \
	  echo "install: as root on the host: systemd-sysusers $(SYSUSERSDIR)/purser.conf;" \
	       "chown root:purser $(SYSCONFDIR)/purser/purser.yaml"; \
	else \
	  if ! getent passwd purser > /dev/null; then \
	    if command -v systemd-sysusers > /dev/null; then systemd-sysusers $(SYSUSERSDIR)/purser.conf; \
	    else adduser --system --group --home /var/lib/purser --no-create-home purser; fi; \
	  fi; \
	  chown root:purser $(SYSCONFDIR)/purser/purser.yaml && chmod 640 $(SYSCONFDIR)/purser/purser.yaml; \
	  if [ -e $(SYSCONFDIR)/purser/db-password ]; then \
	    chown root:purser $(SYSCONFDIR)/purser/db-password && chmod 640 $(SYSCONFDIR)/purser/db-password; fi; \
	  if [ -e $(SYSCONFDIR)/purser/keyring ]; then \
	    chown purser:purser $(SYSCONFDIR)/purser/keyring && chmod 600 $(SYSCONFDIR)/purser/keyring; fi; \
	  echo "install: $(SYSCONFDIR)/purser/purser.yaml root:purser 640"; \
	fi

# libFuzzer targets (t/fuzz/*.c, seeds in t/fuzz/corpus/<target>/): the library built again
# by clang with libFuzzer, AddressSanitizer and UBSan in build/fuzz. `make fuzz` fuzzes each
# target for FUZZ_SECONDS (new inputs in build/fuzz/corpus/, crashes in build/fuzz/crashes/);
# `make test` builds them and t/0009 replays every seed.
FUZZ_DIR := build/fuzz
FUZZ_SRC := $(sort $(wildcard t/fuzz/*.c))
FUZZ_TARGETS := $(FUZZ_SRC:t/fuzz/%.c=$(FUZZ_DIR)/fuzz-%)
FUZZ_SANITIZE := -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_CFLAGS = -O1 -g -std=gnu11 -D_GNU_SOURCE -Wall -Werror -Wno-unused-function -Ilib \
              $(FUZZ_SANITIZE) -fsanitize=fuzzer-no-link $(PKG_CFLAGS)
FUZZ_OBJ := $(LIB_SRC:%.c=$(FUZZ_DIR)/%.o) $(FUZZ_DIR)/migrations.o $(FUZZ_DIR)/fcgi/router.o \
            $(FUZZ_DIR)/fcgi/url.o $(FUZZ_DIR)/fcgi/routes-table.o
FUZZ_SECONDS ?= 60

$(FUZZ_DIR)/%.o: %.c $(wildcard lib/*/*.h fcgi/*.h)
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) -c -o $@ $<

$(FUZZ_DIR)/migrations.o: $(BUILD)/migrations.c
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) -c -o $@ $<

$(FUZZ_DIR)/fcgi/routes-table.o: fcgi/routes.c $(wildcard lib/*/*.h fcgi/*.h)
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) -DROUTES_TABLE_ONLY -c -o $@ $<

$(FUZZ_DIR)/libpurser-fuzz.a: $(FUZZ_OBJ)
	rm -f $@ && ar rcs $@ $^

$(FUZZ_DIR)/fuzz-%: t/fuzz/%.c t/fuzz/fuzz.h $(FUZZ_DIR)/libpurser-fuzz.a
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_DIR)/libpurser-fuzz.a $(LDLIBS)

fuzz-build: $(FUZZ_TARGETS)

fuzz: ready
	@$(MAKE) --no-print-directory fuzz-build
	@mkdir -p $(FUZZ_DIR)/crashes
	@for t in $(FUZZ_SRC:t/fuzz/%.c=%); do \
	  mkdir -p $(FUZZ_DIR)/corpus/$$t; \
	  echo "fuzz: $$t for $(FUZZ_SECONDS) s"; \
	  $(FUZZ_DIR)/fuzz-$$t -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
	    -artifact_prefix=$(FUZZ_DIR)/crashes/$$t- $(FUZZ_DIR)/corpus/$$t t/fuzz/corpus/$$t \
	    2>&1 | grep -E '^(stat::number_of_executed_units|==[0-9]+==ERROR|SUMMARY|artifact_prefix)' \
	    || true; \
	done
	@ls $(FUZZ_DIR)/crashes | grep . && { echo "fuzz: crashes in $(FUZZ_DIR)/crashes"; exit 1; } || echo "fuzz: no crash"

# make style: fails when a C file is not laid out as .clang-format says (make format lays
# them out), or handles an error in a form STYLE.md forbids (tools/idioms); .ci/run calls it.
STYLE_SRC = $(sort $(wildcard fcgi/*.c fcgi/*.h lib/*/*.c lib/*/*.h client/*.c client/*.h tools/*.c t/*.c t/*.h \
                              t/fuzz/*.c t/fuzz/*.h bench/*.c))

style: deps
	@clang-format --dry-run --Werror $(STYLE_SRC) && echo "style: $(words $(STYLE_SRC)) files as .clang-format lays them out"
	@tools/idioms && echo "style: lib/, fcgi/ and client/ handle errors in STYLE's two forms (tools/idioms)"

format: deps
	clang-format -i $(STYLE_SRC)

clean:
	rm -rf build
