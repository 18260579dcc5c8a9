package a2a

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
)

var fuzzSeeds = []string{
	`{"message":{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"What is the weather today?"}]}}`,
	`{"message":{"messageId":"m-2","role":"ROLE_USER","parts":[{"text":"Run the report"}]},"configuration":{"returnImmediately":true,"historyLength":0}}`,
	`{"message":{"messageId":"m-3","taskId":"t-1","contextId":"c-1","role":"ROLE_USER","parts":[{"text":"From San Francisco to New York"}]}}`,
	`{"message":{"messageId":"m-4","role":"ROLE_USER","parts":[{"text":"Generate the Q1 sales report"}]},"configuration":{"taskPushNotificationConfig":{"url":"https://client.example.com/webhook/a2a","authentication":{"scheme":"Bearer","credentials":"x"}}}}`,
	`{"message":{"message_id":"m","role":2,"parts":[{"raw":"iVBORw0KGgo=","filename":"d.png","media_type":"image/png"},{"url":"https://x/y"},{"data":{"a":[1,2.5e3,null,true,"s",{}]}}],"metadata":{"k":{"n":-0}}},"tenant":"t"}`,
	`{"task":{"id":"t-1","contextId":"c-1","status":{"state":"TASK_STATE_WORKING","timestamp":"2025-04-17T17:47:09.680794Z"}}}`,
	`{"artifactUpdate":{"taskId":"t-1","contextId":"c-1","artifact":{"artifactId":"a-1","parts":[{"text":"Part two."}]},"append":true,"lastChunk":true}}`,
	`{"statusUpdate":{"taskId":"t-1","contextId":"c-1","status":{"state":"TASK_STATE_COMPLETED","timestamp":"2023-10-27T10:00:00+02:00"}}}`,
	`{"message":{"messageId":"m","role":"agent","parts":[]}}`,
	`{"kind":"message","unknown":[{"deep":[[[]]]}],"message":null}`,
	`{"message":{"messageId":"\u00e9\ud83d\ude00\"\\","role":"ROLE_USER","parts":[{"text":"\u0000\u001f"}]}}`,
	// The A2A 1.1 preview's members (spec §3.2.2, §3.2.7): int64 in ProtoJSON is a
	// string or a number.
	`{"message":{"messageId":"m-5","taskId":"t-1","role":"ROLE_USER","parts":[{"text":"go on"}]},"configuration":{"ifGenerationMatch":"3"}}`,
	`{"message":{"messageId":"m-6","role":"ROLE_USER","parts":[]},"configuration":{"if_generation_match":-9223372036854775808,"historyLength":2}}`,
	`{"task":{"id":"t-1","contextId":"c-1","status":{"state":"TASK_STATE_WORKING"},"generation":"7"}}`,
	`{"statusUpdate":{"taskId":"t-1","contextId":"c-1","status":{"state":"TASK_STATE_COMPLETED"},"generation":12}}`,
	`{"artifactUpdate":{"taskId":"t-1","contextId":"c-1","artifact":{"artifactId":"a-1","parts":[{"text":"x"}]},"generation":"9223372036854775807"}}`,
	`{"id":"t-1","tenant":"x","historyLength":1,"currentGeneration":"5"}`,
	`{"id":"t-1","current_generation":null,"generation":"1.5"}`,
	`{"id":"t-1","contextId":"c","status":{"state":"TASK_STATE_SUBMITTED"},"generation":0}`,
	// The timeline (spec PR #2129 §3.2.8): entries of both kinds, one of a
	// kind this version does not know (skipped: readers fail open), and
	// artifact generations; timelineLength in a send configuration.
	`{"task":{"id":"t-1","contextId":"c-1","status":{"state":"TASK_STATE_WORKING"},"generation":"6","timeline":[{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"}]},"generation":"1"},{"status":{"state":"TASK_STATE_WORKING"},"generation":2},{"futureKind":{"x":[1]},"generation":"4"},{}],"artifacts":[{"artifactId":"a","parts":[{"text":"x"}],"startGeneration":"3","endGeneration":"5"}]}}`,
	`{"task":{"id":"t-1","contextId":"c-1","status":{"state":"TASK_STATE_WORKING"},"timeline":[{"generation":"-1","status":null}],"artifacts":[{"artifactId":"a","parts":[],"start_generation":-9223372036854775808,"end_generation":"x"}]}}`,
	`{"message":{"messageId":"m-7","role":"ROLE_USER","parts":[{"text":"x"}]},"configuration":{"timelineLength":-1,"timeline_length":2147483648}}`,
}

func fuzzCheck(t *testing.T, data []byte, m proto.Message) {
	err := Unmarshal(data, m)
	if err != nil {
		var de *DecodeError
		if !errors.As(err, &de) {
			t.Fatalf("error %T is not *DecodeError", err)
		}
		if strings.Contains(err.Error(), "proto:") {
			t.Fatalf("error leaks library prefix: %q", err)
		}
		return
	}
	if got, all := CheckRequired(m), checkEveryField(m); !slices.Equal(got, all) {
		t.Fatalf("CheckRequired %q, the walk of every field %q\ninput: %q", got, all, data)
	}
	out, err := Marshal(m)
	if err != nil {
		t.Fatalf("Marshal after successful Unmarshal: %v\ninput: %q", err, data)
	}
	if !json.Valid(out) {
		t.Fatalf("Marshal produced invalid JSON: %q", out)
	}
	if generic, err := appendGeneric(m); err != nil || !bytes.Equal(out, generic) {
		t.Fatalf("the written-out encoding differs from the generic walk's (%v)\n%q\n%q", err, out, generic)
	}
	back := m.ProtoReflect().New().Interface()
	if err := Unmarshal(out, back); err != nil {
		t.Fatalf("re-decode of %q: %v", out, err)
	}
	want := proto.Clone(m)
	truncateTimestamps(want.ProtoReflect())
	if !proto.Equal(want, back) {
		t.Fatalf("round trip mismatch\ninput:  %q\noutput: %q", data, out)
	}
	again, err := Marshal(back)
	if err != nil || !bytes.Equal(out, again) {
		t.Fatalf("second Marshal differs (%v)\n%q\n%q", err, out, again)
	}
}

func FuzzUnmarshalSendMessageRequest(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzCheck(t, data, &SendMessageRequest{})
	})
}

func FuzzRoundTrip(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzCheck(t, data, &SendMessageRequest{})
		fuzzCheck(t, data, &StreamResponse{})
	})
}
