package gateway

import (
	"fmt"
	"strings"
	"testing"
)

// TestTemplateReadBudget: a read of a URI no resource lists is matched
// against every served template — up to maxResources of an upstream's,
// each up to maxURIBytes — with the expressions compiled once, when they
// were listed: a read costs no compilation (a hostile upstream's thousand
// 2 KB templates would otherwise make each client read compile them all).
func TestTemplateReadBudget(t *testing.T) {
	l := &link{u: &Upstream{Name: "up"}, servedTemplates: map[string]resourceDef{}}
	pad := strings.Repeat("a", maxURIBytes-64)
	for i := range maxResources {
		k := fmt.Sprintf("test://t%d/%s/{id}{?x,y,z}", i, pad)
		l.servedTemplates[k] = resourceDef{match: templateRegexp(k)}
	}
	if _, _, ok := l.definitionOf("test://t999/" + pad + "/7"); !ok {
		t.Fatal("the last template does not match")
	}
	allocs := testing.AllocsPerRun(5, func() { l.definitionOf("test://none/x") })
	if allocs > 50 {
		t.Fatalf("a read matched against %d templates made %.0f allocations: it compiles them", maxResources, allocs)
	}
}
