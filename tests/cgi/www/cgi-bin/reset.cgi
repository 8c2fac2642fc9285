#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# The state-changing GET of an old router (unsafe_get in the tests).
# Records that it ran (CGI_TEST_DIR/ran) and keeps the body it was given
# (CGI_TEST_DIR/body, byte for byte), then answers text/plain.
d=${CGI_TEST_DIR:?}
printf '%s %s\n' "$REQUEST_METHOD" "$SCRIPT_NAME$PATH_INFO" >> "$d/ran"
head -c "${CONTENT_LENGTH:-0}" > "$d/body"
printf 'Content-Type: text/plain\n\nran\n'
