package v03_test

import (
	"testing"

	"parley.dev/parley/internal/v03"
)

var fuzzMethods = []string{v03.MethodSend, v03.MethodStream, v03.MethodGet, v03.MethodCancel, v03.MethodResubscribe,
	v03.MethodPushSet, v03.MethodPushGet, v03.MethodPushList, v03.MethodPushDelete, v03.MethodExtendedCard}

// FuzzRequest: the v0.3 JSON-RPC params decoder never panics, and what it
// accepts is a request of a v1.0 operation.
func FuzzRequest(f *testing.F) {
	f.Add(uint8(0), []byte(`{"message":{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"text","text":"hi"}]}}`))
	f.Add(uint8(0), []byte(`{"message":{"kind":"message","messageId":"m","role":"agent","parts":[{"kind":"file","file":{"bytes":"YQ==","name":"a"}},{"kind":"data","data":{"a":[1]}}]},"configuration":{"blocking":false,"historyLength":2,"pushNotificationConfig":{"url":"https://h/","authentication":{"schemes":["Bearer"]}}}}`))
	f.Add(uint8(2), []byte(`{"id":"t","historyLength":-1}`))
	f.Add(uint8(5), []byte(`{"taskId":"t","pushNotificationConfig":{"id":"c","url":"https://h/#x"}}`))
	f.Add(uint8(6), []byte(`{"id":"t"}`))
	f.Add(uint8(8), []byte(`{"id":"t","pushNotificationConfigId":"c"}`))
	f.Add(uint8(0), []byte(`[1]`))
	f.Fuzz(func(t *testing.T, mi uint8, params []byte) {
		method := fuzzMethods[int(mi)%len(fuzzMethods)]
		m, req, err := v03.Request(method, params)
		if err != nil {
			return
		}
		if m == nil || req == nil {
			t.Fatalf("%s %q: accepted without a method or request", method, params)
		}
		if m.NewRequest().ProtoReflect().Descriptor() != req.ProtoReflect().Descriptor() {
			t.Fatalf("%s: request %T does not fit %s", method, req, m.Name)
		}
	})
}

// FuzzProtoBodies: the v0.3 HTTP+JSON body decoders never panic.
func FuzzProtoBodies(f *testing.F) {
	f.Add([]byte(`{"message":{"messageId":"m","role":"ROLE_USER","content":[{"text":"hi"}]}}`))
	f.Add([]byte(`{"request":{"messageId":"m","role":2,"content":[{"file":{"fileWithBytes":"YQ==","mimeType":"a/b"}},{"data":{"data":{"x":1}}}]},"configuration":{"historyLength":3,"pushNotification":{"url":"https://h/"}}}`))
	f.Add([]byte(`{"parent":"tasks/t","configId":"c","config":{"pushNotificationConfig":{"url":"https://h/"}}}`))
	f.Add([]byte(`{"name":"tasks/t/pushNotificationConfigs/c","pushNotificationConfig":{"url":"https://h/"}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var s v03.PSendRequest
		if v03.Decode(body, &s) == nil {
			if r, err := v03.PSendToV1(&s); err == nil && r.GetMessage() == nil {
				t.Fatalf("%q: accepted without a message", body)
			}
		}
		var c v03.PCreatePushRequest
		if v03.Decode(body, &c) == nil {
			if r, err := v03.PCreatePushToV1("t", &c); err == nil && r.GetUrl() == "" {
				t.Fatalf("%q: accepted without a url", body)
			}
		}
	})
}
