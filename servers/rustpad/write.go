package rustpad

import (
	"context"
	"crypto/rand"
	"fmt"
	"strings"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/argschema"
	"github.com/bulwarkmcp/bulwark/servers/rustpad/ot"
	"github.com/bulwarkmcp/bulwark/servers/rustpad/session"
)

// writeResult is what a write tool reports: counts and the caller's own
// arguments, plus the share URL.
type writeResult struct {
	ID               string `json:"id"`
	URL              string `json:"url"`
	LengthCharacters int    `json:"length_characters"`
	Revision         int    `json:"revision"`
	Language         string `json:"language,omitempty"`
	Replacements     int    `json:"replacements,omitempty"`
	Note             string `json:"note,omitempty"`
}

const (
	noteUnchanged = "The pad already held exactly this text; nothing was sent."
	noteLength    = "length_characters is the pad's length right after this change; other users may be editing it."
)

// writeTools are the tools that change pads; read-only mode registers none.
func (s *Server) writeTools() []kernel.Tool {
	return []kernel.Tool{
		argschema.Refine(kernel.NewTool(kernel.Spec[createArgs, writeResult]{
			Name: "create_document", Title: "Create a pad", Policy: createPolicy, Handle: s.createDocument,
			Description: "Create a pad, optionally with text and an editor language, and return its share URL. " +
				"Without an id it picks a random 12-character one. It refuses a pad that already holds text " +
				"(use append_to_document, or set_document to replace it).",
		}), map[string]argschema.Rule{"id": idRule, "text": textRule, "language": languageRule}),
		argschema.Refine(kernel.NewTool(kernel.Spec[setArgs, writeResult]{
			Name: "set_document", Title: "Replace a pad's text", Policy: setPolicy, Handle: s.setDocument,
			Preview: s.previewSet, Action: setAction,
			Description: "Replace the whole text of a pad; the old text cannot be recovered. " +
				"On a pad that holds text, the first call is refused with a single-use confirmToken bound to this pad, the text it " +
				"holds now and the new text; call again with the same arguments and that token. An empty pad is written at once. " +
				"Edits other users make meanwhile are kept.",
		}), map[string]argschema.Rule{"id": idRule, "text": textRule}),
		argschema.Refine(kernel.NewTool(kernel.Spec[appendArgs, writeResult]{
			Name: "append_to_document", Title: "Append to a pad", Policy: appendPolicy, Handle: s.appendToDocument,
			Description: "Add text at the end of a pad. Nothing is separated automatically: include a leading newline if you want one. " +
				"If the result says the outcome is unknown, read the pad before appending again.",
		}), map[string]argschema.Rule{"id": idRule, "text": nonEmptyText}),
		argschema.Refine(kernel.NewTool(kernel.Spec[replaceArgs, writeResult]{
			Name: "replace_in_document", Title: "Replace text in a pad", Policy: replacePolicy, Handle: s.replaceInDocument,
			Description: "Replace literal, case-sensitive text in a pad. The search text must occur exactly once unless " +
				"replace_all is set, which replaces every non-overlapping occurrence. Edits other users make meanwhile are kept.",
		}), map[string]argschema.Rule{"id": idRule, "search": nonEmptyText, "replace": textRule}),
		argschema.Refine(kernel.NewTool(kernel.Spec[languageArgs, writeResult]{
			Name: "set_language", Title: "Set a pad's language", Policy: languagePolicy, Handle: s.setLanguage,
			Description: "Set the editor language (syntax highlighting) of a pad, for example markdown, python or rust. " +
				"Letters are sent in lower case.",
		}), map[string]argschema.Rule{"id": idRule, "language": languageRule}),
	}
}

func setAction(in setArgs) string { return fmt.Sprintf("replace the whole text of pad %q", in.ID) }

// progress reports a step of a write (connect, send, acknowledged).
func progress(ctx context.Context, call *kernel.Call, step int, msg string) {
	if call != nil {
		call.Progress(ctx, float64(step), 3, msg)
	}
}

// edit sends op, built on the state p observed, and waits for Rustpad's
// acknowledgement; it returns the pad's state right after.
func (s *Server) edit(ctx context.Context, call *kernel.Call, p *pad, op *ot.Operation) (session.State, error) {
	if s.beforeEdit != nil {
		s.beforeEdit(p.id)
	}
	progress(ctx, call, 2, fmt.Sprintf("sending the edit (%d character(s) after it)", op.TargetLen()))
	if _, err := p.sess.Edit(ctx, p.st.Revision, op); err != nil {
		return session.State{}, s.sessionError(err, p.id)
	}
	progress(ctx, call, 3, "Rustpad acknowledged the edit")
	st, err := p.sess.State()
	if err != nil {
		// The edit is acknowledged; only the report of the state after it
		// failed.
		return session.State{Length: op.TargetLen()}, nil
	}
	return st, nil
}

// openForWrite opens a pad and reports the first step.
func (s *Server) openForWrite(ctx context.Context, call *kernel.Call, id string) (*pad, error) {
	p, err := s.open(ctx, id)
	if err != nil {
		return nil, err
	}
	progress(ctx, call, 1, fmt.Sprintf("connected; the pad holds %d character(s)", p.st.Length))
	return p, nil
}

func (s *Server) result(id string, st session.State) writeResult {
	return writeResult{ID: id, URL: s.shareURL(id), LengthCharacters: st.Length, Revision: st.Revision, Note: noteLength}
}

// tooLarge refuses a write that would pass the document cap, before sending.
func (s *Server) tooLarge(id string, have, add int) error {
	if have+add <= s.maxDoc {
		return nil
	}
	return kernel.Errorf(kernel.ResourceExhausted, "Pad %q holds %d character(s); adding %d would pass the limit of %d.", id, have, add, s.maxDoc).
		WithHint("Rustpad caps a pad at 262,144 characters; write less, or remove text first.")
}

func (s *Server) createDocument(ctx context.Context, call *kernel.Call, in createArgs) (writeResult, error) {
	id := in.ID
	if id == "" {
		id = strings.ToLower(rand.Text()[:12])
	}
	if err := checkID(id); err != nil {
		return writeResult{}, err
	}
	n, err := checkText("text", in.Text, 0)
	if err != nil {
		return writeResult{}, err
	}
	var lang string
	if in.Language != "" {
		if lang, err = checkLanguage(in.Language); err != nil {
			return writeResult{}, err
		}
	}
	p, err := s.openForWrite(ctx, call, id)
	if err != nil {
		return writeResult{}, err
	}
	defer p.close()
	if p.st.Length > 0 {
		return writeResult{}, kernel.Errorf(kernel.AlreadyExists, "Pad %q already holds %d character(s); create_document writes only to an empty pad.", id, p.st.Length).
			WithHint("append_to_document adds to it; set_document replaces it (after a confirmation). Without an id, create_document picks a new one.")
	}
	st := p.st
	if n > 0 {
		if err := s.tooLarge(id, 0, n); err != nil {
			return writeResult{}, err
		}
		if st, err = s.edit(ctx, call, p, appendOp(0, in.Text)); err != nil {
			return writeResult{}, err
		}
	}
	if lang != "" {
		if err := p.sess.SetLanguage(ctx, lang); err != nil {
			return writeResult{}, s.sessionError(err, id)
		}
	}
	res := s.result(id, st)
	res.Language = lang
	return res, nil
}

// previewSet reads the pad before set_document issues or redeems a token.
// The token's target is the pad id and the fingerprint of the text it
// holds, so a confirmation never covers text that changed since; the
// summary quotes the pad id and character counts only.
func (s *Server) previewSet(ctx context.Context, call *kernel.Call, in setArgs) (kernel.Preview, error) {
	if err := checkID(in.ID); err != nil {
		return kernel.Preview{}, err
	}
	n, err := checkText("text", in.Text, 0)
	if err != nil {
		return kernel.Preview{}, err
	}
	p, err := s.open(ctx, in.ID)
	if err != nil {
		return kernel.Preview{}, err
	}
	defer p.close()
	obs := s.observe(p.st)
	var sum string
	if obs.length == 0 {
		sum = fmt.Sprintf("Pad %q is currently empty; the call writes the %d character(s) given.", in.ID, n)
	} else {
		sum = fmt.Sprintf("Pad %q currently holds %d character(s); the call replaces them with the %d character(s) given, "+
			"and the old text cannot be recovered.", in.ID, obs.length, n)
	}
	if p.st.Text == in.Text {
		sum += " It already holds exactly this text, so the call would change nothing."
	}
	if s.afterPreview != nil {
		s.afterPreview(in.ID)
	}
	// An empty pad (told apart from history not yet arrived by the session
	// and the /api/text cross-check) has nothing to lose: no token.
	return kernel.Preview{Target: "pad " + in.ID + " holding " + obs.fingerprint, Summary: sum,
		NothingToLose: obs.length == 0, Data: obs}, nil
}

func (s *Server) setDocument(ctx context.Context, call *kernel.Call, in setArgs) (writeResult, error) {
	if err := checkID(in.ID); err != nil {
		return writeResult{}, err
	}
	n, err := checkText("text", in.Text, 0)
	if err != nil {
		return writeResult{}, err
	}
	pv, ok := call.Preview()
	confirmed, _ := pv.Data.(observation)
	p, err := s.openForWrite(ctx, call, in.ID)
	if err != nil {
		return writeResult{}, err
	}
	defer p.close()
	if !ok {
		return writeResult{}, kernel.Errorf(kernel.Conflict, "The state of pad %q was not checked before this write; nothing was written.", in.ID).
			WithHint("Call set_document again without a token; it will ask for a new confirmation.")
	}
	if now := s.observe(p.st); now.fingerprint != confirmed.fingerprint {
		return writeResult{}, kernel.Errorf(kernel.Conflict, "Pad %q changed after the confirmation was checked (it held %d character(s) then, %d now); nothing was written.",
			in.ID, confirmed.length, now.length).
			WithHint("Call set_document again without a token; it will ask for a new confirmation.")
	}
	if p.st.Text == in.Text {
		res := s.result(in.ID, p.st)
		res.Note = noteUnchanged
		return res, nil
	}
	if err := s.tooLarge(in.ID, 0, n); err != nil {
		return writeResult{}, err
	}
	st, err := s.edit(ctx, call, p, setOp(p.st.Text, in.Text))
	if err != nil {
		return writeResult{}, err
	}
	return s.result(in.ID, st), nil
}

func (s *Server) appendToDocument(ctx context.Context, call *kernel.Call, in appendArgs) (writeResult, error) {
	if err := checkID(in.ID); err != nil {
		return writeResult{}, err
	}
	n, err := checkText("text", in.Text, 1)
	if err != nil {
		return writeResult{}, err
	}
	p, err := s.openForWrite(ctx, call, in.ID)
	if err != nil {
		return writeResult{}, err
	}
	defer p.close()
	if err := s.tooLarge(in.ID, p.st.Length, n); err != nil {
		return writeResult{}, err
	}
	st, err := s.edit(ctx, call, p, appendOp(p.st.Length, in.Text))
	if err != nil {
		return writeResult{}, err
	}
	return s.result(in.ID, st), nil
}

func (s *Server) replaceInDocument(ctx context.Context, call *kernel.Call, in replaceArgs) (writeResult, error) {
	if err := checkReplace(in); err != nil {
		return writeResult{}, err
	}
	p, err := s.openForWrite(ctx, call, in.ID)
	if err != nil {
		return writeResult{}, err
	}
	defer p.close()
	op, count := replaceOp(p.st.Text, in.Search, in.Replace, in.ReplaceAll)
	switch {
	case count == 0:
		return writeResult{}, kernel.Errorf(kernel.NotFound, "The search text does not occur in pad %q (%d character(s)).", in.ID, p.st.Length).
			WithHint("Read the pad with get_document: the search is literal and case-sensitive.")
	case count > 1 && !in.ReplaceAll:
		return writeResult{}, kernel.Errorf(kernel.FailedPrecondition, "The search text occurs %d times in pad %q; without replace_all it must occur exactly once.", count, in.ID).
			WithHint("Make search longer so that it occurs once, or set replace_all to replace every occurrence.")
	}
	if err := selfCheck(op, p.st.Text, in); err != nil {
		return writeResult{}, err
	}
	if err := s.tooLarge(in.ID, op.TargetLen(), 0); err != nil {
		return writeResult{}, err
	}
	st, err := s.edit(ctx, call, p, op)
	if err != nil {
		return writeResult{}, err
	}
	res := s.result(in.ID, st)
	res.Replacements = 1
	if in.ReplaceAll {
		res.Replacements = count
	}
	return res, nil
}

func checkReplace(in replaceArgs) error {
	if err := checkID(in.ID); err != nil {
		return err
	}
	if _, err := checkText("search", in.Search, 1); err != nil {
		return err
	}
	if _, err := checkText("replace", in.Replace, 0); err != nil {
		return err
	}
	if in.Search == in.Replace {
		return invalid("replace", "equals search, so nothing would change")
	}
	return nil
}

// selfCheck applies op locally and compares with the standard library's
// replacement before anything is sent.
func selfCheck(op *ot.Operation, text string, in replaceArgs) error {
	n := 1
	if in.ReplaceAll {
		n = -1
	}
	got, err := op.Apply(text)
	if err != nil || got != strings.Replace(text, in.Search, in.Replace, n) {
		return fmt.Errorf("replace_in_document: the operation built for pad %s does not reproduce the replacement (%v)", in.ID, err)
	}
	return nil
}

func (s *Server) setLanguage(ctx context.Context, call *kernel.Call, in languageArgs) (writeResult, error) {
	if err := checkID(in.ID); err != nil {
		return writeResult{}, err
	}
	lang, err := checkLanguage(in.Language)
	if err != nil {
		return writeResult{}, err
	}
	p, err := s.openForWrite(ctx, call, in.ID)
	if err != nil {
		return writeResult{}, err
	}
	defer p.close()
	if err := p.sess.SetLanguage(ctx, lang); err != nil {
		return writeResult{}, s.sessionError(err, in.ID)
	}
	progress(ctx, call, 3, "Rustpad acknowledged the language")
	res := s.result(in.ID, p.st)
	res.Language, res.Note = lang, ""
	return res, nil
}
