#!/bin/bash
pid=$(cat /tmp/s51/docs_audit/$1.pid); kill $pid; for i in $(seq 1 20); do kill -0 $pid 2>/dev/null || { echo stopped; exit 0; }; sleep 1; done; kill -9 $pid; echo killed
