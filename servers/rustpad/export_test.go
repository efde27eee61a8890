package rustpad

// SetBeforeEdit installs a hook that runs right before a tool sends its
// edit, after it read the pad: tests use it to make another user's edit
// land exactly in between.
func SetBeforeEdit(s *Server, f func(padID string)) { s.beforeEdit = f }

// SetAfterPreview installs a hook that runs when set_document's preview has
// read the pad, before the gate decides and the handler reads it again.
func SetAfterPreview(s *Server, f func(padID string)) { s.afterPreview = f }
