package cardsign

import (
	"strings"
	"testing"

	"github.com/gowebpki/jcs"
	"google.golang.org/protobuf/types/known/structpb"

	"parley.dev/parley/a2a"
)

// TestRFC8785Examples runs the canonicalization step on the examples of
// RFC 8785 itself: §3.2.2 (numbers, string escapes, literals) and §3.2.3
// (member order by UTF-16 code units, where U+1F600 sorts before U+FB33).
func TestRFC8785Examples(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"3.2.2", `{
  "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
  "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
  "literals": [null, true, false]
}`, `{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`},
		{"3.2.3", `{
  "\u20ac": "Euro Sign",
  "\r": "Carriage Return",
  "\ufb33": "Hebrew Letter Dalet With Dagesh",
  "1": "One",
  "\ud83d\ude00": "Emoji: Grinning Face",
  "\u0080": "Control",
  "\u00f6": "Latin Small Letter O With Diaeresis"
}`, "{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\u0080\":\"Control\",\"ö\":\"Latin Small Letter O With Diaeresis\"," +
			"\"€\":\"Euro Sign\",\"😀\":\"Emoji: Grinning Face\",\"\uFB33\":\"Hebrew Letter Dalet With Dagesh\"}"},
		// Appendix B, a few of its IEEE 754 rows.
		{"B", `[0, -0, 1e21, 1e20, 5e-324, 1.7976931348623157e308, 9007199254740992, 295147905179352830000, 0.000001, 1e-7]`,
			`[0,0,1e+21,100000000000000000000,5e-324,1.7976931348623157e+308,9007199254740992,295147905179352830000,0.000001,1e-7]`},
	}
	for _, c := range cases {
		got, err := jcs.Transform([]byte(c.in))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if string(got) != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
}

// TestCanonicalPresence follows §8.4.1's worked example: optional fields
// explicitly set to false stay, an empty repeated field goes, REQUIRED
// fields stay even when empty, and signatures are left out.
func TestCanonicalPresence(t *testing.T) {
	no := false
	card := &a2a.AgentCard{
		Name:         "Example Agent",
		Capabilities: &a2a.AgentCapabilities{Streaming: &no, PushNotifications: &no},
		Signatures:   []*a2a.AgentCardSignature{{Protected: "x", Signature: "y"}},
	}
	got, err := Canonical(doc(t, card))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"capabilities":{"pushNotifications":false,"streaming":false},"defaultInputModes":[],"defaultOutputModes":[],` +
		`"description":"","name":"Example Agent","skills":[],"supportedInterfaces":[],"version":""}`
	if string(got) != want {
		t.Errorf("canonical form:\n got %s\nwant %s", got, want)
	}
	if len(card.Signatures) != 1 {
		t.Error("Canonical changed the card")
	}
	sdk, err := SDKCanonical(doc(t, card))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"capabilities":{"pushNotifications":false,"streaming":false},"name":"Example Agent"}`; string(sdk) != want {
		t.Errorf("SDK form:\n got %s\nwant %s", sdk, want)
	}
}

// TestCanonicalNumbersAndText puts numbers and non-ASCII text where a card
// can hold them (an extension's params, names) and checks their RFC 8785
// form.
func TestCanonicalNumbersAndText(t *testing.T) {
	params, err := structpb.NewStruct(map[string]any{"max": 1e30, "ratio": 4.50, "small": 0.002, "€": "ö"})
	if err != nil {
		t.Fatal(err)
	}
	card := &a2a.AgentCard{
		Name: "Agent \u00f6 \U0001F600 <&>", Description: "tab\there", Version: "1",
		Capabilities: &a2a.AgentCapabilities{Extensions: []*a2a.AgentExtension{{Uri: "urn:x", Params: params}}},
	}
	got, err := Canonical(doc(t, card))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`"params":{"max":1e+30,"ratio":4.5,"small":0.002,"€":"ö"}`,
		`"name":"Agent ö 😀 <&>"`,
		`"description":"tab\there"`,
	} {
		if !strings.Contains(string(got), want) {
			t.Errorf("canonical form %s\nlacks %s", got, want)
		}
	}
}
