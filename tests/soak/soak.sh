#!/usr/bin/env bash
echo "soak: not written yet"; exit 77
