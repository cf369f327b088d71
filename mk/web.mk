# SPDX-License-Identifier: Apache-2.0
# The web bridge: snapback-web against the real snapbackd over real sockets.
.PHONY: test-web

test-web: deps ## The web bridge against the real daemon: upgrade checks, framing, quotas, ping, one daemon connection per page
	$(SWIFT) build --product snapbackd
	$(SWIFT) build --product snapback-web
	python3 Tests/web/test_bridge.py $(DEBUG_BIN)/snapbackd $(DEBUG_BIN)/snapback-web
