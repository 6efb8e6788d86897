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
PKGS := jansson yaml-0.1 libmariadb libcrypto libpcre2-8
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
FCGI_SRC := $(sort $(wildcard fcgi/*.c))
TEST_SRC := $(sort $(wildcard t/[0-9]*.c))
SQL := $(sort $(wildcard sql/*.sql))

LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/%.o) $(BUILD)/migrations.o
FCGI_OBJ := $(FCGI_SRC:%.c=$(BUILD)/%.o)
TESTS := $(TEST_SRC:t/%.c=$(BUILD)/t/%.t)

STATE ?= var

.PHONY: all deps ready build run stop test clean
.SECONDARY:
all: build

DEPS ?= tools/deps
deps:
	@$(DEPS)

# deps, then the build in a make of its own: that make reads this file once the packages are
# there (t/0006-fresh-build.t holds this with a pkg-config that knows nothing before deps).
ready: deps
	@$(MAKE) --no-print-directory build

build: $(BUILD)/layers.ok $(BUILD)/purser-fcgi $(BUILD)/purser $(TESTS)

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

$(BUILD)/libpurser.a: $(LIB_OBJ)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/purser-fcgi: $(FCGI_OBJ) $(BUILD)/libpurser.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# The purser command checks the route table against the RBAC policy: it links the table
# (compiled without handlers) and the router, not the web layer's handlers.
$(BUILD)/fcgi/routes-table.o: fcgi/routes.c $(wildcard lib/*/*.h fcgi/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -DROUTES_TABLE_ONLY -c -o $@ $<

$(BUILD)/purser: $(BUILD)/tools/purser.o $(BUILD)/fcgi/routes-table.o $(BUILD)/fcgi/router.o \
                 $(BUILD)/fcgi/url.o $(BUILD)/libpurser.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/t/%.t: $(BUILD)/t/%.o $(BUILD)/libpurser.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# unit tests of the web layer's pure parts link those objects, before the library they use
$(BUILD)/t/0070-url.t: $(BUILD)/t/0070-url.o $(BUILD)/fcgi/url.o $(BUILD)/libpurser.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

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
ifeq ($(VALGRIND),1)
TEST_ENV += TAP_VALGRIND=1 PURSER_VALGRIND=1
endif
PROVE ?= prove
PROVE_FLAGS ?=

test: ready
	$(TEST_ENV) $(PROVE) $(PROVE_FLAGS) $(TESTS) $(sort $(wildcard t/[0-9]*.t))

clean:
	rm -rf build
