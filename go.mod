module github.com/bulwarkmcp/bulwark

go 1.26.8

require (
	github.com/coder/websocket v1.8.15 // indirect
	github.com/google/go-cmp v0.7.0 // indirect
	github.com/miekg/dns v1.1.73 // indirect
	github.com/modelcontextprotocol/go-sdk v1.8.0 // indirect
	golang.org/x/net v0.57.0 // indirect
	golang.org/x/sys v0.47.0 // indirect
	golang.org/x/time v0.16.0 // indirect
)
