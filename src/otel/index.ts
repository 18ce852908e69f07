// fencelock/otel: OpenTelemetry spans and metrics from fencelock's diagnostics_channel events.
// Placeholder entry; the implementation follows.
export {}
