#!/usr/bin/env bash
# Issue 20's throughput check: 32 streams, every request under a JSON schema (response_format
# json_schema) against the same workload unconstrained; sampling_ab.sh's alternated runs.
SCHEMA='{"response_format": {"type": "json_schema", "json_schema": {"name": "answer", "schema": {"type": "object", "properties": {"answer": {"type": "string"}, "sources": {"type": "array", "items": {"type": "string"}}, "confidence": {"type": "number"}}, "required": ["answer", "sources", "confidence"], "additionalProperties": false}}}}'
LABEL=schema BODY=$SCHEMA OUT=${OUT:-/tmp/structured_ab} PORT=${PORT:-8793} ROUNDS=${ROUNDS:-2} \
  exec "$(dirname "$0")/sampling_ab.sh"
