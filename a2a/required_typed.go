package a2a

// The REQUIRED check of the types every request and every event carries,
// read from their Go fields instead of through protoreflect: the same rules
// as requiredFields, in the same order (field number, list order), with
// the same paths and descriptions. The server checks each SendMessage
// request and each artifact chunk and status message an agent emits,
// where the reflective walk cost about a microsecond a request and a
// quarter of one a chunk. The walk of every field (checker.all, the
// tests' reference) never takes these paths, and the tests and the fuzz
// targets compare the two on every input.

// typed checks m, at path, when it is one of the types below, and
// reports whether it was.
func (c *checker) typed(m any, path []byte) bool {
	switch m := m.(type) {
	case *SendMessageRequest:
		c.sendMessageRequest(m, path)
	case *Message:
		c.msg(m, path)
	case *Artifact:
		c.artifact(m, path)
	case *Part:
		c.part(m, path)
	case *GetTaskRequest:
		if m.GetId() == "" {
			c.add(appendPathName(path, "id"), descMissing)
		}
	default:
		return false
	}
	return true
}

// sendMessageRequest: message (REQUIRED), then the configuration, whose
// push configuration has REQUIRED fields of its own (checked by the walk).
func (c *checker) sendMessageRequest(r *SendMessageRequest, path []byte) {
	if m := r.GetMessage(); m != nil {
		c.msg(m, appendPathName(path, "message"))
	} else {
		c.add(appendPathName(path, "message"), descMissing)
	}
	if cfg := r.GetConfiguration(); cfg != nil {
		c.message(cfg.ProtoReflect(), appendPathName(path, "configuration"))
	}
}

// msg: messageId, role and parts are REQUIRED; each part is checked.
func (c *checker) msg(m *Message, path []byte) {
	if m.GetMessageId() == "" {
		c.add(appendPathName(path, "messageId"), descMissing)
	}
	if m.GetRole() == Role_ROLE_UNSPECIFIED {
		c.add(appendPathName(path, "role"), descMissing)
	}
	c.parts(m.GetParts(), appendPathName(path, "parts"))
}

// artifact: artifactId and parts are REQUIRED; each part is checked.
func (c *checker) artifact(a *Artifact, path []byte) {
	if a.GetArtifactId() == "" {
		c.add(appendPathName(path, "artifactId"), descMissing)
	}
	c.parts(a.GetParts(), appendPathName(path, "parts"))
}

// parts checks a REQUIRED list of parts at path.
func (c *checker) parts(ps []*Part, path []byte) {
	if len(ps) == 0 {
		c.add(path, descEmptyList)
	}
	for j, p := range ps {
		c.part(p, appendPathIndex(path, j))
	}
}

// part: one member of its content must be set.
func (c *checker) part(p *Part, path []byte) {
	if p.GetContent() == nil {
		c.add(path, descPartEmpty)
	}
}
