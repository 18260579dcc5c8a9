package equivalence_test

import (
	"strings"
	"testing"

	"parley.dev/parley/a2a"
	"parley.dev/parley/server"
)

// TestPreviewLeavesOlderVersionsAlone runs every scenario (their calls are
// v1.0 and v0.3 ones) on each binding twice, with the A2A 1.1 preview off
// and on: the outcomes are the same once identifiers and timestamps are
// neutralized (spec §3.2.7: the generation exists for 1.1 callers only).
// The one difference the preview makes to them is the list of versions
// VersionNotSupportedError names, which then has 1.1 too.
func TestPreviewLeavesOlderVersionsAlone(t *testing.T) {
	for _, sc := range scenarios() {
		t.Run(sc.op+"/"+sc.name, func(t *testing.T) {
			t.Parallel()
			for _, b := range bindings {
				t.Run(b, func(t *testing.T) {
					if why, ok := sc.skip[b]; ok {
						t.Skip(why)
					}
					var got [2]string
					for i, preview := range []bool{false, true} {
						cfg := sc.cfg
						if preview {
							inner := cfg.mutate
							cfg.mutate = func(card *a2a.AgentCard, o *server.Options) {
								if inner != nil {
									inner(card, o)
								}
								o.ProtocolVersions = []string{"1.1", "1.0", "0.3"}
							}
						}
						e := start(t, cfg)
						c := &caller{t: t, e: e, b: b, z: newNormalizer()}
						c.z.host = strings.TrimPrefix(e.base, "http://")
						got[i] = c.z.normalize(sc.run(c), sc.want.anyMessage)
					}
					on := strings.NewReplacer("1.1, 1.0, 0.3", "1.0, 0.3", "1.1,1.0,0.3", "1.0,0.3").Replace(got[1])
					if got[0] != on {
						t.Errorf("the outcome with the preview on differs:\n--- off\n%s--- on\n%s", got[0], got[1])
					}
				})
			}
		})
	}
}
