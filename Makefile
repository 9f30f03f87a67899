# Churon's build entry points. The work is done by scripts (scripts/ and
# packaging/), which also run on their own; the version is read from
# FyneApp.toml, the one place it is set.

SHELL := /bin/bash
VERSION_OF = source packaging/common.sh && $(1)

.PHONY: all build test package package-linux package-deb package-windows \
	icons metainfo check-packaging check-deb version clean

all: build

## build: bin/churon for this machine, with `churon --version` filled in
build:
	@source scripts/lib.sh && require_go && require_gui_deps
	go build -ldflags "$$($(call VERSION_OF,go_ldflags))" -o bin/churon .
	@./bin/churon --version

## test: the whole test suite, as CI runs it
test:
	bash scripts/test

## package: every package this machine can build, into dist/ with SHA256SUMS
package:
	bash packaging/package.sh linux deb windows

package-linux:
	bash packaging/package.sh linux
package-deb:
	bash packaging/package.sh deb
package-windows:
	bash packaging/package.sh windows

## icons: re-render assets/icon-256.png (the embedded icon) from the SVG
icons:
	bash packaging/icons.sh --assets

## metainfo: write and validate the AppStream file into dist/
metainfo:
	@mkdir -p dist
	bash packaging/linux/metainfo.sh dist/io.github.churon.Churon.metainfo.xml

## check-packaging: seconds — the engine cross-compiles for macOS and
## Windows, the .desktop entry and the AppStream file validate
check-packaging:
	bash packaging/check.sh

## check-deb: minutes, as root — build the .deb, apt-get install it, run
## `churon --version` from it, remove it
check-deb:
	bash packaging/check-deb.sh

## version: what the next build will call itself
version:
	@$(call VERSION_OF,echo "$$(app_version) build $$(app_build) commit $$(app_commit)")

clean:
	rm -rf bin dist
