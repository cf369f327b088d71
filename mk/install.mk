# SPDX-License-Identifier: Apache-2.0
# make install and make uninstall (PREFIX, DESTDIR and the directories are set in the Makefile, before
# the includes that install into them).
INSTALLED   := $(BINDIR)/snapbackd $(BINDIR)/snapback $(BINDIR)/snapback-sync $(BINDIR)/snapback-web \
	$(BINDIR)/snapback-fleet \
	$(UNITDIR)/snapbackd.service $(UNITDIR)/snapbackd.socket $(UNITDIR)/snapback-sync.service \
	$(UNITDIR)/snapback-web.service $(UNITDIR)/snapback-web.socket $(UNITDIR)/snapback-fleet.service \
	$(SYSUSERSDIR)/snapback-fleet.conf $(MANDIR)/man8/snapback-fleet.8 \
	$(MANDIR)/man8/snapback-web.8 $(MANDIR)/man5/snapback-web.conf.5 $(PREFIX)/share/snapback/web/snapback.js \
	$(SYSUSERSDIR)/snapback.conf $(SYSUSERSDIR)/snapback-sync.conf $(SYSCONFDIR)/snapback/sync.conf.example \
	$(MANDIR)/man8/snapbackd.8 $(MANDIR)/man5/snapbackd.conf.5 $(MANDIR)/man1/snapback.1 \
	$(MANDIR)/man8/snapback-sync.8 \
	$(BASHCOMPDIR)/snapback $(ZSHCOMPDIR)/_snapback $(FISHCOMPDIR)/snapback.fish \
	$(patsubst proto/%,$(INCLUDEDIR)/%,$(wildcard proto/snapback/v1/*.proto)) \
	$(DOCDIR)/PROTOCOL.md $(DOCDIR)/policy.md \
	$(INCLUDEDIR)/snapback/snapback.h $(INCLUDEDIR)/snapback/cues.h $(PREFIX)/lib/libsnapback.so.$(LIBSNAPBACK_VERSION) \
	$(PREFIX)/lib/libsnapback.so.$(LIBSNAPBACK_SOVERSION) $(PREFIX)/lib/libsnapback.so $(PREFIX)/lib/libsnapback.a \
	$(PREFIX)/lib/pkgconfig/libsnapback.pc

.PHONY: install uninstall

# An operator's configuration is never overwritten: a changed one stays, the new default goes beside it
# as FILE.default (install_config SOURCE INSTALLED MODE), and uninstall removes it only when unchanged
# (uninstall_config SOURCE INSTALLED).
install_config = if [ -e $(2) ] && ! cmp -s $(1) $(2); then \
		install -m $(3) $(1) $(2).default; \
		echo "kept $(2) (changed); the new default is $(2).default"; \
	else \
		install -m $(3) $(1) $(2); \
	fi
uninstall_config = if cmp -s $(1) $(2); then rm -f $(2); \
	elif [ -e $(2) ]; then echo "kept $(2) (changed)"; fi

install: release install-lib ## Install binaries (stripped), units, config, man pages, completions, .proto files, libsnapback (PREFIX, DESTDIR)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(UNITDIR) $(DESTDIR)$(SYSUSERSDIR) $(DESTDIR)$(MANDIR)/man8 \
		$(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(INCLUDEDIR)/snapback/v1 $(DESTDIR)$(DOCDIR) \
		$(DESTDIR)$(SYSCONFDIR)/snapback/snapbackd.conf.d $(DESTDIR)$(SYSCONFDIR)/snapback/snapback-web.conf.d \
		$(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR) $(DESTDIR)$(FISHCOMPDIR)
	install -m 0755 -s $(RELEASE_BIN)/snapbackd $(RELEASE_BIN)/snapback $(RELEASE_BIN)/snapback-sync $(DESTDIR)$(BINDIR)/
	install -m 0755 -s $(RELEASE_BIN)/snapback-web $(RELEASE_BIN)/snapback-fleet $(DESTDIR)$(BINDIR)/
	@# snapback-fleet: the fleet's aggregator, for the operator's hub (snapback-fleet(8)).
	sed 's#^ExecStart=/usr/local/bin/snapback-fleet #ExecStart=$(BINDIR)/snapback-fleet #' systemd/snapback-fleet.service \
		> $(DESTDIR)$(UNITDIR)/snapback-fleet.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/snapback-fleet.service
	install -m 0644 systemd/snapback-fleet.sysusers $(DESTDIR)$(SYSUSERSDIR)/snapback-fleet.conf
	install -m 0644 docs/man/snapback-fleet.8 $(DESTDIR)$(MANDIR)/man8/
	@$(call install_config,config/fleet.conf,$(DESTDIR)$(SYSCONFDIR)/snapback/fleet.conf,0644)
	sed 's#^ExecStart=/usr/local/bin/snapback-web #ExecStart=$(BINDIR)/snapback-web #' systemd/snapback-web.service \
		> $(DESTDIR)$(UNITDIR)/snapback-web.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/snapback-web.service
	install -m 0644 systemd/snapback-web.socket $(DESTDIR)$(UNITDIR)/
	install -m 0644 docs/man/snapback-web.8 $(DESTDIR)$(MANDIR)/man8/
	install -d $(DESTDIR)$(PREFIX)/share/snapback/web
	install -m 0644 Sources/snapback-web/snapback.js $(DESTDIR)$(PREFIX)/share/snapback/web/
	install -m 0644 docs/man/snapback-web.conf.5 $(DESTDIR)$(MANDIR)/man5/
	@# The script's line names the installed snapback.js.
	@webconf=$(DESTDIR)$(SYSCONFDIR)/snapback/snapback-web.conf; \
	sed 's#^\#script = /usr/share/#script = $(PREFIX)/share/#' config/snapback-web.conf > $$webconf.new; \
	chmod 0640 $$webconf.new; \
	if [ -e $$webconf ] && ! cmp -s $$webconf.new $$webconf; then \
		mv $$webconf.new $$webconf.default; \
		echo "kept $$webconf (changed); the new default is $$webconf.default"; \
	else \
		mv $$webconf.new $$webconf; \
	fi
	sed 's#^ExecStart=/usr/local/bin/snapbackd #ExecStart=$(BINDIR)/snapbackd #' systemd/snapbackd.service \
		> $(DESTDIR)$(UNITDIR)/snapbackd.service
	sed 's#^ExecStart=/usr/local/bin/snapback-sync #ExecStart=$(BINDIR)/snapback-sync #' systemd/snapback-sync.service \
		> $(DESTDIR)$(UNITDIR)/snapback-sync.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/snapbackd.service $(DESTDIR)$(UNITDIR)/snapback-sync.service
	install -m 0644 systemd/snapbackd.socket $(DESTDIR)$(UNITDIR)/
	install -m 0644 systemd/snapback.sysusers $(DESTDIR)$(SYSUSERSDIR)/snapback.conf
	install -m 0644 systemd/snapback-sync.sysusers $(DESTDIR)$(SYSUSERSDIR)/snapback-sync.conf
	sed 's#PREFIX/#$(PREFIX)/#g' docs/man/snapbackd.8 > $(DESTDIR)$(MANDIR)/man8/snapbackd.8
	chmod 0644 $(DESTDIR)$(MANDIR)/man8/snapbackd.8
	install -m 0644 docs/man/snapbackd.conf.5 $(DESTDIR)$(MANDIR)/man5/
	install -m 0644 docs/man/snapback.1 $(DESTDIR)$(MANDIR)/man1/
	install -m 0644 docs/man/snapback-sync.8 $(DESTDIR)$(MANDIR)/man8/
	@# The agent's example only: snapback-sync.service starts once the operator writes sync.conf.
	install -m 0644 config/sync.conf $(DESTDIR)$(SYSCONFDIR)/snapback/sync.conf.example
	@# The completions are generated by the binary being installed, from its command table: true to its commands.
	$(RELEASE_BIN)/snapback --generate-completion-script bash > $(DESTDIR)$(BASHCOMPDIR)/snapback
	$(RELEASE_BIN)/snapback --generate-completion-script zsh > $(DESTDIR)$(ZSHCOMPDIR)/_snapback
	$(RELEASE_BIN)/snapback --generate-completion-script fish > $(DESTDIR)$(FISHCOMPDIR)/snapback.fish
	chmod 0644 $(DESTDIR)$(BASHCOMPDIR)/snapback $(DESTDIR)$(ZSHCOMPDIR)/_snapback $(DESTDIR)$(FISHCOMPDIR)/snapback.fish
	install -m 0644 proto/snapback/v1/*.proto $(DESTDIR)$(INCLUDEDIR)/snapback/v1/
	install -m 0644 proto/PROTOCOL.md docs/policy.md $(DESTDIR)$(DOCDIR)/
	@$(call install_config,config/snapbackd.conf,$(DESTDIR)$(SYSCONFDIR)/snapback/snapbackd.conf,0644)

uninstall: ## Remove what make install put in place (a changed configuration is kept)
	rm -f $(addprefix $(DESTDIR),$(INSTALLED)) $(DESTDIR)$(SYSCONFDIR)/snapback/snapbackd.conf.default \
		$(DESTDIR)$(SYSCONFDIR)/snapback/snapback-web.conf.default $(DESTDIR)$(SYSCONFDIR)/snapback/fleet.conf.default
	@webconf=$(DESTDIR)$(SYSCONFDIR)/snapback/snapback-web.conf; \
	if sed 's#^\#script = /usr/share/#script = $(PREFIX)/share/#' config/snapback-web.conf | cmp -s - $$webconf; then \
		rm -f $$webconf; \
	elif [ -e $$webconf ]; then echo "kept $$webconf (changed)"; fi
	@$(call uninstall_config,config/snapbackd.conf,$(DESTDIR)$(SYSCONFDIR)/snapback/snapbackd.conf)
	@$(call uninstall_config,config/fleet.conf,$(DESTDIR)$(SYSCONFDIR)/snapback/fleet.conf)
	-rmdir $(DESTDIR)$(INCLUDEDIR)/snapback/v1 $(DESTDIR)$(INCLUDEDIR)/snapback $(DESTDIR)$(DOCDIR) \
		$(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR) $(DESTDIR)$(FISHCOMPDIR) \
		$(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/share/snapback/web $(DESTDIR)$(PREFIX)/share/snapback \
		$(DESTDIR)$(SYSCONFDIR)/snapback/snapbackd.conf.d $(DESTDIR)$(SYSCONFDIR)/snapback/snapback-web.conf.d \
		$(DESTDIR)$(SYSCONFDIR)/snapback 2>/dev/null

