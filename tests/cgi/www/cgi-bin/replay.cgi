#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Prints CGI_TEST_DIR/answer as it is: any answer a test wants a program
# to give, byte for byte.
cat "${CGI_TEST_DIR:?}/answer"
