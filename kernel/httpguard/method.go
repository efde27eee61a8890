package httpguard

import "net/http"

// postOnly refuses every method but POST with 405 and Allow: POST: the
// stateless Streamable HTTP transport has no GET stream and no DELETE.
// CORS preflights are answered by the CORS guard before this one runs.
// The zero value is ready to use.
type postOnly struct{}

// Check returns errMethodNotAllowed unless r is a POST.
func (postOnly) Check(r *http.Request) error {
	if r.Method != http.MethodPost {
		return errMethodNotAllowed
	}
	return nil
}

// Handler answers 405 with Allow: POST when Check fails, else calls next.
func (p postOnly) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := p.Check(r); err != nil {
			w.Header().Set("Allow", http.MethodPost)
			writeCheckError(w, nil, err)
			return
		}
		next.ServeHTTP(w, r)
	})
}
