# SPDX-License-Identifier: Apache-2.0
# The web bridge: snapback-web against the real snapbackd, over real sockets and from real browsers
# (headless Chromium over DevTools, WPE WebKit's cog), pages served over http on 127.0.0.1.
.PHONY: test-web

test-web: deps $(C_REL)/player_poll ## The web bridge against the real daemon: upgrade checks, framing, quotas, ping, one daemon connection per page, every method and its scoping by app; refusals from Chromium and WPE, snapback.js playing an MP4 in both, sharing watched breaks with the native example player_poll
	$(SWIFT) build --product snapbackd
	$(SWIFT) build --product snapback-web
	python3 Tests/web/test_bridge.py $(DEBUG_BIN)/snapbackd $(DEBUG_BIN)/snapback-web
	python3 Tests/web/test_methods.py $(DEBUG_BIN)/snapbackd $(DEBUG_BIN)/snapback-web
	python3 Tests/web/test_browsers.py $(DEBUG_BIN)/snapbackd $(DEBUG_BIN)/snapback-web $(C_REL)/player_poll
