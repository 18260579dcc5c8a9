package a2a

import (
	"bufio"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// checkEveryField is CheckRequired walking every field, not only those
// that can break a rule (fieldInfo.check): the two must agree.
func checkEveryField(m proto.Message) []FieldViolation {
	if m == nil || !m.ProtoReflect().IsValid() {
		return CheckRequired(m)
	}
	c := checker{all: true}
	c.message(m.ProtoReflect(), nil)
	return c.out
}

// CheckRequired skips only fields that cannot break a rule: on the fuzz
// seeds, decoded as the messages they were written for, it finds what a
// walk of every field finds.
func TestCheckRequiredSkipsNothingItMustCheck(t *testing.T) {
	n := 0
	for _, s := range fuzzSeeds {
		for _, m := range []proto.Message{&SendMessageRequest{}, &StreamResponse{}, &Task{}, &AgentCard{}} {
			if Unmarshal([]byte(s), m) != nil {
				continue
			}
			n++
			if got, all := CheckRequired(m), checkEveryField(m); !slices.Equal(got, all) {
				t.Errorf("%s from %s:\n got %q\nevery field %q", m.ProtoReflect().Descriptor().Name(), s, got, all)
			}
		}
	}
	if n == 0 {
		t.Fatal("no seed decoded")
	}
}

// TestCheckRequired lists, case by case, the violations CheckRequired must
// report. It is one long table on purpose: each case is a message and its
// expected violations, easiest to review side by side.
func TestCheckRequired(t *testing.T) {
	tests := []struct {
		name string
		msg  proto.Message
		want []FieldViolation
	}{
		{"valid request", sampleSendRequest(), nil},
		{"valid card", fullCard(), nil},
		{"valid task", sampleTask(), nil},
		{"empty list response", &ListTasksResponse{}, nil},
		{"nil", (*SendMessageRequest)(nil), []FieldViolation{{"message", descMissing}}},
		{"missing message", &SendMessageRequest{}, []FieldViolation{{"message", descMissing}}},
		{
			name: "message fields",
			msg:  &SendMessageRequest{Message: &Message{Parts: []*Part{{}, textPart("x"), {MediaType: "text/plain"}}}},
			want: []FieldViolation{
				{"message.messageId", descMissing},
				{"message.role", descMissing},
				{"message.parts[0]", descPartEmpty},
				{"message.parts[2]", descPartEmpty},
			},
		},
		{
			name: "empty parts",
			msg:  &SendMessageRequest{Message: &Message{MessageId: "m", Role: Role_ROLE_USER}},
			want: []FieldViolation{{"message.parts", descEmptyList}},
		},
		{
			name: "empty text is content",
			msg:  &Message{MessageId: "m", Role: Role_ROLE_USER, Parts: []*Part{{Content: &Part_Text{}}}},
			want: nil,
		},
		{"root part", &Part{}, []FieldViolation{{"", descPartEmpty}}},
		{
			name: "stream artifact update",
			msg: &StreamResponse{Payload: &StreamResponse_ArtifactUpdate{ArtifactUpdate: &TaskArtifactUpdateEvent{
				TaskId: "t", Artifact: &Artifact{Parts: []*Part{{}}},
			}}},
			want: []FieldViolation{
				{"artifactUpdate.contextId", descMissing},
				{"artifactUpdate.artifact.artifactId", descMissing},
				{"artifactUpdate.artifact.parts[0]", descPartEmpty},
			},
		},
		{
			name: "task status and history",
			msg: &Task{Id: "t", Status: &TaskStatus{Message: &Message{MessageId: "m", Role: Role_ROLE_AGENT}},
				History: []*Message{{MessageId: "h", Parts: []*Part{textPart("x")}}}},
			want: []FieldViolation{
				{"status.state", descMissing},
				{"status.message.parts", descEmptyList},
				{"history[0].role", descMissing},
			},
		},
		{
			name: "agent card",
			msg: &AgentCard{
				Name:                "n",
				SupportedInterfaces: []*AgentInterface{{Url: "https://x"}},
				Provider:            &AgentProvider{},
				Capabilities:        &AgentCapabilities{},
				SecuritySchemes: map[string]*SecurityScheme{
					"z": {Scheme: &SecurityScheme_HttpAuthSecurityScheme{HttpAuthSecurityScheme: &HTTPAuthSecurityScheme{}}},
					"a": {Scheme: &SecurityScheme_Oauth2SecurityScheme{Oauth2SecurityScheme: &OAuth2SecurityScheme{
						Flows: &OAuthFlows{Flow: &OAuthFlows_ClientCredentials{ClientCredentials: &ClientCredentialsOAuthFlow{TokenUrl: "https://t"}}},
					}}},
					"m": {Scheme: &SecurityScheme_Oauth2SecurityScheme{Oauth2SecurityScheme: &OAuth2SecurityScheme{}}},
				},
				DefaultInputModes:  []string{"text/plain"},
				DefaultOutputModes: []string{"text/plain"},
				Skills:             []*AgentSkill{{Id: "s", Name: "s", Description: "d"}},
				Signatures:         []*AgentCardSignature{{}},
			},
			want: []FieldViolation{
				{"description", descMissing},
				{"supportedInterfaces[0].protocolBinding", descMissing},
				{"supportedInterfaces[0].protocolVersion", descMissing},
				{"provider.url", descMissing},
				{"provider.organization", descMissing},
				{"version", descMissing},
				{`securitySchemes["a"].oauth2SecurityScheme.flows.clientCredentials.scopes`, descEmptyList},
				{`securitySchemes["m"].oauth2SecurityScheme.flows`, descMissing},
				{`securitySchemes["z"].httpAuthSecurityScheme.scheme`, descMissing},
				{"skills[0].tags", descEmptyList},
				{"signatures[0].protected", descMissing},
				{"signatures[0].signature", descMissing},
			},
		},
		{
			name: "card without skills",
			msg:  &AgentCard{Name: "n", Description: "d", Version: "1", SupportedInterfaces: minimalCard().SupportedInterfaces, Capabilities: &AgentCapabilities{}, DefaultInputModes: []string{"a"}, DefaultOutputModes: []string{"a"}},
			want: []FieldViolation{{"skills", descEmptyList}},
		},
		{"get task", &GetTaskRequest{HistoryLength: proto.Int32(1)}, []FieldViolation{{"id", descMissing}}},
		{"push config", &TaskPushNotificationConfig{Authentication: &AuthenticationInfo{}}, []FieldViolation{{"url", descMissing}, {"authentication.scheme", descMissing}}},
		{"list push configs", &ListTaskPushNotificationConfigsRequest{Tenant: "t"}, []FieldViolation{{"taskId", descMissing}}},
		{"delete push config", &DeleteTaskPushNotificationConfigRequest{TaskId: "t"}, []FieldViolation{{"id", descMissing}}},
		{"struct metadata skipped", &CancelTaskRequest{Id: "x", Metadata: mustStruct(map[string]any{"a": map[string]any{}})}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := CheckRequired(tc.msg)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("CheckRequired:\n got %q\nwant %q", got, tc.want)
			}
			if all := checkEveryField(tc.msg); !slices.Equal(got, all) {
				t.Fatalf("CheckRequired skipped a field it had to check:\n got %q\nevery field %q", got, all)
			}
		})
	}
	if got := CheckRequired(nil); got != nil {
		t.Fatalf("CheckRequired(nil) = %v", got)
	}
}

func TestIsRequired(t *testing.T) {
	md := (&ListTasksResponse{}).ProtoReflect().Descriptor()
	if !IsRequired(md.Fields().ByName("next_page_token")) {
		t.Error("ListTasksResponse.next_page_token should be required")
	}
	if IsRequired((&Task{}).ProtoReflect().Descriptor().Fields().ByName("context_id")) {
		t.Error("Task.context_id should not be required")
	}
	if IsRequired(nil) {
		t.Error("IsRequired(nil)")
	}
}

// TestRequiredTableMatchesProto checks requiredFields against the
// "// REQUIRED" markers in proto/a2a.proto, and that every entry names a real
// field.
func TestRequiredTableMatchesProto(t *testing.T) {
	f, err := os.Open("../proto/a2a.proto")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	msgRe := regexp.MustCompile(`^message (\w+) \{`)
	fieldRe := regexp.MustCompile(`^\s+(?:optional |repeated )?(?:map<[^>]+>|[\w.]+) (\w+) = \d+[^;]*;(.*)$`)
	marked := map[protoreflect.FullName]bool{}
	var cur string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if m := msgRe.FindStringSubmatch(line); m != nil {
			cur = m[1]
			continue
		}
		if line == "}" {
			cur = ""
			continue
		}
		if m := fieldRe.FindStringSubmatch(line); m != nil && cur != "" && strings.Contains(m[2], "REQUIRED") {
			marked[protoreflect.FullName("lf.a2a.v1."+cur+"."+m[1])] = true
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	for name := range marked {
		if !requiredFields[name] {
			t.Errorf("%s is marked REQUIRED in the proto but missing from requiredFields", name)
		}
	}
	for name := range requiredFields {
		if !marked[name] {
			t.Errorf("%s is in requiredFields but not marked REQUIRED in the proto", name)
		}
		d, err := protoregistry.GlobalFiles.FindDescriptorByName(name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if _, ok := d.(protoreflect.FieldDescriptor); !ok {
			t.Errorf("%s is not a field", name)
		}
	}
	if len(marked) != 61 {
		t.Errorf("found %d REQUIRED markers, want 61", len(marked))
	}
}

// TestCheckRequiredTyped: the types checked by their Go fields
// (checker.typed) report what the reflective walk of every field reports,
// at the corners a decoder does not produce: nil list elements, a oneof
// member holding nil, a message in a message that is set but empty.
func TestCheckRequiredTyped(t *testing.T) {
	noText := &Part{}
	nilData := &Part{Content: &Part_Data{}}
	for i, m := range []proto.Message{
		&Artifact{},
		&Artifact{ArtifactId: "a", Parts: []*Part{nil, noText, nilData, {Content: &Part_Text{}}}},
		&Message{},
		&Message{MessageId: "m", Role: Role_ROLE_AGENT, Parts: []*Part{noText}},
		&Message{Role: Role(99), Parts: []*Part{nil}},
		&Part{},
		nilData,
		&SendMessageRequest{},
		&SendMessageRequest{Message: &Message{}},
		&SendMessageRequest{Message: &Message{MessageId: "m"}, Configuration: &SendMessageConfiguration{
			TaskPushNotificationConfig: &TaskPushNotificationConfig{Authentication: &AuthenticationInfo{}}}},
		&SendMessageRequest{Configuration: &SendMessageConfiguration{}},
		&GetTaskRequest{},
		&GetTaskRequest{Id: "t"},
		&Task{History: []*Message{{}, nil}, Artifacts: []*Artifact{{Parts: []*Part{nil}}}},
		&StreamResponse{Payload: &StreamResponse_ArtifactUpdate{ArtifactUpdate: &TaskArtifactUpdateEvent{Artifact: &Artifact{}}}},
	} {
		if got, all := CheckRequired(m), checkEveryField(m); !slices.Equal(got, all) {
			t.Errorf("case %d, %T:\n got %q\nevery field %q", i, m, got, all)
		}
	}
	var none *Artifact
	want := []FieldViolation{{"artifactId", descMissing}, {"parts", descEmptyList}}
	if got := CheckRequired(none); !slices.Equal(got, want) {
		t.Errorf("a nil *Artifact: %q, want %q", got, want)
	}
}
