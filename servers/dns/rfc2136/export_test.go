package rfc2136

// SetAfterRead makes every change of p run f between its read and its
// update, so that a test can change the zone in between.
func SetAfterRead(p *Provider, f func()) { p.afterRead = f }
