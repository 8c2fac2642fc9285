#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# The application of a shared response case (tests/cases): records that it
# ran (CGI_TEST_DIR/ran), then prints CGI_TEST_DIR/answer as it is.
d=${CGI_TEST_DIR:?}
printf '%s\n' "$REQUEST_METHOD" >> "$d/ran"
cat "$d/answer"
