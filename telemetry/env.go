package telemetry

import (
	"fmt"
	"os"
	"strings"
)

// Which exporters the environment asks for. Parley reads the standard
// variables of the OpenTelemetry SDK specification, with one departure
// made on purpose: where the specification defaults OTEL_TRACES_EXPORTER
// and OTEL_METRICS_EXPORTER to "otlp", Parley exports nothing unless told
// to, so a server started without configuration sends nothing anywhere.
// Telling it is either naming the exporter or giving an OTLP endpoint
// (docs/observability.md).

// plan is what the environment configures.
type plan struct {
	traces        bool   // export spans over OTLP
	tracesProto   string // "grpc" or "http/protobuf"
	metrics       bool   // export metrics over OTLP
	metricsProto  string
	prometheusEnv bool // OTEL_METRICS_EXPORTER names prometheus
}

// readPlan reads the OTEL_* variables through getenv.
func readPlan(getenv func(string) string) (plan, error) {
	var p plan
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return p, nil
	}
	te, err := exporters("OTEL_TRACES_EXPORTER", getenv, "otlp", "none")
	if err != nil {
		return p, err
	}
	me, err := exporters("OTEL_METRICS_EXPORTER", getenv, "otlp", "prometheus", "none")
	if err != nil {
		return p, err
	}
	endpoint := getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != ""
	p.traces = te["otlp"] || (len(te) == 0 && (endpoint || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""))
	p.metrics = me["otlp"] || (len(me) == 0 && (endpoint || getenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT") != ""))
	p.prometheusEnv = me["prometheus"]
	if p.tracesProto, err = protocol("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", getenv); err != nil {
		return p, err
	}
	if p.metricsProto, err = protocol("OTEL_EXPORTER_OTLP_METRICS_PROTOCOL", getenv); err != nil {
		return p, err
	}
	return p, nil
}

// exporters reads a comma-separated exporter list; "none" alone turns the
// signal off (an empty map with no error means: not set).
func exporters(name string, getenv func(string) string, known ...string) (map[string]bool, error) {
	set := map[string]bool{}
	for _, v := range strings.Split(getenv(name), ",") {
		v = strings.ToLower(strings.TrimSpace(v))
		if v == "" {
			continue
		}
		ok := false
		for _, k := range known {
			ok = ok || v == k
		}
		if !ok {
			return nil, fmt.Errorf("%s=%q: Parley knows %s", name, v, strings.Join(known, ", "))
		}
		set[v] = true
	}
	if set["none"] {
		return map[string]bool{"none": true}, nil
	}
	return set, nil
}

// protocol reads a signal's OTLP protocol, falling back to
// OTEL_EXPORTER_OTLP_PROTOCOL and then to http/protobuf (the
// specification's default).
func protocol(name string, getenv func(string) string) (string, error) {
	v := strings.TrimSpace(getenv(name))
	if v == "" {
		name, v = "OTEL_EXPORTER_OTLP_PROTOCOL", strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_PROTOCOL"))
	}
	switch v {
	case "", "http/protobuf":
		return "http/protobuf", nil
	case "grpc":
		return "grpc", nil
	}
	return "", fmt.Errorf("%s=%q: Parley exports OTLP as grpc or http/protobuf", name, v)
}

// osGetenv is os.Getenv, the default lookup.
func osGetenv(k string) string { return os.Getenv(k) }
