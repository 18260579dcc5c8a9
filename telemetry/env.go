package telemetry

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// Which exporters the environment asks for. Parley reads the standard
// variables of the OpenTelemetry SDK specification, with one departure
// made on purpose: where the specification defaults OTEL_TRACES_EXPORTER
// and OTEL_METRICS_EXPORTER to "otlp", Parley exports nothing unless told
// to, so a server started without configuration sends nothing anywhere.
// Telling it is either naming the exporter or giving an OTLP endpoint.

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
		if !slices.Contains(known, v) {
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

// samplerFromEnv makes the sampler OTEL_TRACES_SAMPLER names, with its
// OTEL_TRACES_SAMPLER_ARG, as the SDK would (its default is parent-based,
// always on), except that a value Parley cannot honour is an error where
// the SDK logs it and samples everything.
func samplerFromEnv(getenv func(string) string) (sdktrace.Sampler, error) {
	name := strings.ToLower(strings.TrimSpace(getenv("OTEL_TRACES_SAMPLER")))
	arg := strings.TrimSpace(getenv("OTEL_TRACES_SAMPLER_ARG"))
	base, parent := strings.CutPrefix(name, "parentbased_")
	if name == "" {
		base, parent = "always_on", true
	}
	var s sdktrace.Sampler
	switch base {
	case "always_on":
		s = sdktrace.AlwaysSample()
	case "always_off":
		s = sdktrace.NeverSample()
	case "traceidratio":
		v, err := 1.0, error(nil)
		if arg != "" {
			v, err = strconv.ParseFloat(arg, 64)
		}
		if err != nil || v < 0 || v > 1 {
			return nil, fmt.Errorf("OTEL_TRACES_SAMPLER_ARG=%q: want a ratio from 0 to 1", arg)
		}
		s = sdktrace.TraceIDRatioBased(v)
	default:
		return nil, fmt.Errorf("OTEL_TRACES_SAMPLER=%q: Parley knows always_on, always_off, traceidratio and their parentbased_ forms", name)
	}
	if parent {
		s = sdktrace.ParentBased(s)
	}
	return s, nil
}

// osGetenv is os.Getenv, the default lookup.
func osGetenv(k string) string { return os.Getenv(k) }
