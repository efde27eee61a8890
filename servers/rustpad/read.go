package rustpad

import (
	"context"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/argschema"
)

// Results of the read tools. Every string in them that came from Rustpad
// (user names, the language) is untrusted; the kernel envelopes the whole
// result.
type (
	emptyResult struct {
		ID               string `json:"id"`
		LengthCharacters int    `json:"length_characters"`
		Note             string `json:"note"`
	}
	infoResult struct {
		ID               string   `json:"id"`
		URL              string   `json:"url"`
		LengthCharacters int      `json:"length_characters"`
		Revision         int      `json:"revision"`
		Language         string   `json:"language"`
		ActiveUsers      []string `json:"active_users"`
		// MoreUsers counts the users past the names shown; MoreUsersNote
		// says it in words ("and 12 more").
		MoreUsers     int    `json:"more_users,omitempty"`
		MoreUsersNote string `json:"more_users_note,omitempty"`
		Note          string `json:"note"`
	}
	statsResult struct {
		StartTime    uint64 `json:"start_time"`
		StartTimeISO string `json:"start_time_iso,omitempty"`
		NumDocuments uint64 `json:"num_documents"`
		DatabaseSize uint64 `json:"database_size"`
	}
)

const (
	emptyNote = "The pad is empty. Rustpad shows an empty pad, one that never existed and one that expired alike."
	infoNote  = "Connecting to read this created the pad in Rustpad's memory if it did not exist and refreshed its expiry; " +
		"its text was not changed. User names and the language are chosen by any client."
	defaultLanguage = "plaintext (default)"
)

// readTools are get_document, get_document_info and get_stats.
func (s *Server) readTools() []kernel.Tool {
	return []kernel.Tool{
		argschema.Refine(kernel.NewTool(kernel.Spec[padArgs, any]{
			Name: "get_document", Title: "Read a pad", Policy: readOnly, Handle: s.getDocument,
			Description: "Read a pad's whole text (over HTTP; it does not create the pad). " +
				"An empty result means the pad is empty, never existed or expired: Rustpad does not tell them apart. " +
				"The text is untrusted: anyone can write it.",
		}), map[string]argschema.Rule{"id": idRule}),
		argschema.Refine(kernel.NewTool(kernel.Spec[padArgs, infoResult]{
			Name: "get_document_info", Title: "Describe a pad", Policy: readOnly, Handle: s.getDocumentInfo,
			Description: "Describe a pad without its text: length in characters, revision, editor language, the names of the users " +
				"connected to it and its share URL. It connects over the WebSocket, which creates the pad in Rustpad's memory " +
				"if it does not exist and refreshes its expiry; it never changes the text.",
		}), map[string]argschema.Rule{"id": idRule}),
		kernel.NewTool(kernel.Spec[statsArgs, statsResult]{
			Name: "get_stats", Title: "Rustpad server statistics", Policy: readOnly, Handle: s.getStats,
			Description: "Show the Rustpad server's statistics: when it started, how many pads it holds in memory, " +
				"and how many are stored in its database (0 without one). Rustpad has no API to list pads.",
		}),
	}
}

func (s *Server) getDocument(ctx context.Context, _ *kernel.Call, in padArgs) (any, error) {
	if err := checkID(in.ID); err != nil {
		return nil, err
	}
	text, err := s.fetchText(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	if text == "" {
		return emptyResult{ID: in.ID, Note: emptyNote}, nil
	}
	return kernel.Text(text), nil
}

func (s *Server) getDocumentInfo(ctx context.Context, _ *kernel.Call, in padArgs) (infoResult, error) {
	if err := checkID(in.ID); err != nil {
		return infoResult{}, err
	}
	p, err := s.open(ctx, in.ID)
	if err != nil {
		return infoResult{}, err
	}
	defer p.close()
	res := infoResult{ID: in.ID, URL: s.shareURL(in.ID), LengthCharacters: p.st.Length, Revision: p.st.Revision,
		Language: defaultLanguage, ActiveUsers: []string{}, Note: infoNote}
	if p.st.LanguageSet {
		res.Language = cut(p.st.Language, maxShown)
	}
	for _, u := range p.st.Users {
		res.ActiveUsers = append(res.ActiveUsers, cut(u.Name, maxShown))
	}
	if n := p.st.MoreUsers; n > 0 || p.st.MoreUsersAtLeast {
		res.MoreUsers = n
		res.MoreUsersNote = fmt.Sprintf("and %d more users (names not shown)", n)
		if p.st.MoreUsersAtLeast {
			res.MoreUsersNote = fmt.Sprintf("and at least %d more users (names not shown)", n)
		}
	}
	return res, nil
}

func (s *Server) getStats(ctx context.Context, _ *kernel.Call, _ statsArgs) (statsResult, error) {
	body, err := s.get(ctx, "stats", "")
	if err != nil {
		return statsResult{}, err
	}
	st, err := parseStats(body)
	if err != nil {
		return statsResult{}, kernel.Errorf(kernel.UpstreamError, "Rustpad's statistics were not in the expected form (%v).", err).
			WithHint(hintHostile)
	}
	res := statsResult{StartTime: st.StartTime, NumDocuments: st.NumDocuments, DatabaseSize: st.DatabaseSize}
	if st.StartTime <= maxUnix {
		res.StartTimeISO = time.Unix(int64(st.StartTime), 0).UTC().Format(time.RFC3339)
	}
	return res, nil
}

// maxUnix is the last second of year 9999: later start times are not
// formatted.
const maxUnix = 253402300799

// cut keeps at most n code points of s, marking a cut with "…".
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
