package a2a

import (
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

func BenchmarkMarshalTask(b *testing.B) {
	task := sampleTask()
	b.Run("parley", func(b *testing.B) {
		b.ReportAllocs()
		buf := make([]byte, 0, 4096)
		for b.Loop() {
			var err error
			if buf, err = AppendJSON(buf[:0], task); err != nil {
				b.Fatal(err)
			}
		}
		b.SetBytes(int64(len(buf)))
	})
	b.Run("parley-Marshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Marshal(task); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("protojson", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := protojson.Marshal(task); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkUnmarshalSendMessageRequest(b *testing.B) {
	data, err := Marshal(sampleSendRequest())
	if err != nil {
		b.Fatal(err)
	}
	b.Run("parley", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			var m SendMessageRequest
			if err := Unmarshal(data, &m); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("protojson", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(data)))
		opts := protojson.UnmarshalOptions{DiscardUnknown: true}
		for b.Loop() {
			var m SendMessageRequest
			if err := opts.Unmarshal(data, &m); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkCheckRequired is the check of an artifact chunk (which the
// server makes for every chunk an agent emits) and of a SendMessage
// request.
func BenchmarkCheckRequired(b *testing.B) {
	for _, c := range []struct {
		name string
		msg  proto.Message
	}{
		{"artifact", &Artifact{ArtifactId: "a1", Name: "result", Parts: []*Part{{Content: &Part_Text{Text: "chunk 1"}}}}},
		{"send", sampleSendRequest()},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if v := CheckRequired(c.msg); len(v) > 0 {
					b.Fatal(v)
				}
			}
		})
	}
}

// BenchmarkCloneArtifact is the copy of an artifact chunk, written out
// and by proto.Clone.
func BenchmarkCloneArtifact(b *testing.B) {
	a := &Artifact{ArtifactId: "a1", Name: "result", Parts: []*Part{{Content: &Part_Text{Text: "chunk 1"}}}}
	b.Run("CloneArtifact", func(b *testing.B) {
		for b.Loop() {
			CloneArtifact(a)
		}
	})
	b.Run("proto.Clone", func(b *testing.B) {
		for b.Loop() {
			proto.Clone(a)
		}
	})
}
