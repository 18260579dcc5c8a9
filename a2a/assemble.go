package a2a

// ArtifactAssembler puts a task's artifacts back together from the chunks
// of a stream (TaskArtifactUpdateEvent, §4.2.2 of the A2A specification). A
// chunk with append set adds its parts to the artifact of the same id; a
// chunk without append replaces that artifact whole; lastChunk marks the
// artifact done. The specification leaves the rest open; the assembler
// applies chunks the way Parley's server builds the task's artifacts, so the
// result matches what GetTask returns:
//
//   - an append to an id never seen starts that artifact (nothing is lost);
//   - appended parts are kept as sent, after the earlier ones: join their
//     text with Text or ArtifactText, never with JoinText, which would put
//     newlines inside words split across chunks;
//   - an appended chunk's name and description, when set, replace the
//     artifact's; its metadata and extensions are ignored.
//
// The zero value is ready to use. An ArtifactAssembler is not safe for
// concurrent use. It keeps copies of what it is given; the artifacts it
// returns are its own, and may change as later chunks arrive: read them, and
// clone one (CloneArtifact) to keep or modify it.
type ArtifactAssembler struct {
	byID  map[string]*assembled
	order []string
}

// assembled is one artifact as built so far.
type assembled struct {
	a    *Artifact
	done bool
}

// Add applies what the event carries about artifacts, and ignores any other
// event. An artifact update is applied as a chunk (see AddChunk). A Task
// snapshot, which holds its artifacts as assembled so far, sets each of them
// (replacing the ones with the same id; see Done); chunks that follow it
// extend those.
func (as *ArtifactAssembler) Add(ev StreamEvent) {
	switch ev.Kind() {
	case EventArtifactUpdate:
		as.AddChunk(ev.Response.GetArtifactUpdate())
	case EventTask:
		for _, a := range ev.Response.GetTask().GetArtifacts() {
			if a != nil {
				as.put(CloneArtifact(a), true)
			}
		}
	}
}

// AddChunk applies one artifact update and returns the artifact as
// assembled so far. An update without an artifact changes nothing and
// returns nil.
func (as *ArtifactAssembler) AddChunk(u *TaskArtifactUpdateEvent) *Artifact {
	a := u.GetArtifact()
	if a == nil {
		return nil
	}
	cur, ok := as.byID[a.ArtifactId]
	if !ok || !u.GetAppend() {
		return as.put(CloneArtifact(a), u.GetLastChunk())
	}
	AppendChunk(cur.a, CloneArtifact(a))
	cur.done = u.GetLastChunk()
	return cur.a
}

// AppendChunk applies an appended chunk (append: true, spec §4.2.2) to dst,
// the artifact with the same id: the chunk's parts are added after dst's,
// and its name and description, when set, replace dst's. dst keeps the
// chunk's parts (not copies). The server builds stored artifacts and
// ArtifactAssembler rebuilds streamed ones with this one rule.
func AppendChunk(dst, chunk *Artifact) {
	dst.Parts = append(dst.Parts, chunk.Parts...)
	if chunk.Name != "" {
		dst.Name = chunk.Name
	}
	if chunk.Description != "" {
		dst.Description = chunk.Description
	}
}

// put sets the artifact a (the assembler's own copy), keeping the place of
// an artifact with the same id in the order.
func (as *ArtifactAssembler) put(a *Artifact, done bool) *Artifact {
	if as.byID == nil {
		as.byID = map[string]*assembled{}
	}
	if _, ok := as.byID[a.ArtifactId]; !ok {
		as.order = append(as.order, a.ArtifactId)
	}
	as.byID[a.ArtifactId] = &assembled{a: a, done: done}
	return a
}

// Artifacts returns the artifacts assembled so far, in the order their ids
// were first seen. The slice is the caller's; the artifacts are the
// assembler's.
func (as *ArtifactAssembler) Artifacts() []*Artifact {
	out := make([]*Artifact, 0, len(as.order))
	for _, id := range as.order {
		out = append(out, as.byID[id].a)
	}
	return out
}

// Artifact returns the artifact with the id as assembled so far, or nil
// when no chunk of it has arrived.
func (as *ArtifactAssembler) Artifact(id string) *Artifact {
	if x, ok := as.byID[id]; ok {
		return x.a
	}
	return nil
}

// Text returns the text of the artifact with the id: its text parts
// concatenated without separators, so token-level chunks such as "Hel" and
// "lo" read "Hello". It is "" for an id not seen.
func (as *ArtifactAssembler) Text(id string) string {
	return ArtifactText(as.Artifact(id))
}

// Done reports whether the artifact with the id is complete as far as the
// stream has said: its last chunk (lastChunk) has arrived, or it came in a
// Task snapshot, which does not say whether more will follow. Any chunk of
// it that arrives afterwards, appended or not, makes it not done again
// until a chunk with lastChunk.
func (as *ArtifactAssembler) Done(id string) bool {
	x, ok := as.byID[id]
	return ok && x.done
}
