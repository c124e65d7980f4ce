#!/bin/bash
P=$(cat /tmp/s59/audit_iso/server.pid); kill $P; for i in $(seq 1 20); do kill -0 $P 2>/dev/null || { echo stopped; exit 0; }; sleep 0.5; done; kill -9 $P; echo killed
