package vdbapi_test

import (
	"fmt"
	"io"
	"net/http"

	"github.com/bulwarkmcp/bulwark/internal/fake/vdbapi"
)

// A test starts the fake, provisions a key and points its client at APIURL.
func Example() {
	fake := vdbapi.New(nil)
	defer fake.Close()
	key := fake.AddKey(vdbapi.OrgA, "secret")

	req, _ := http.NewRequest("GET", fake.APIURL()+vdbapi.APIVersion+"/vuln/"+vdbapi.Log4Shell+"/kev", nil)
	req.Header.Set("Authorization", "ApiKey "+key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		panic(err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()

	r := fake.Requests()[0]
	fmt.Println(res.StatusCode, res.Header.Get("X-VDB-Plan"), r.Path, r.Scheme, r.Org == vdbapi.OrgA)
	fmt.Println(r.Header.Get("Authorization"), r.Contains(key))
	// Output:
	// 200 pro /v2/vuln/CVE-2021-44228/kev ApiKey true
	// ApiKey [redacted] true
}
