package dns

import "github.com/bulwarkmcp/bulwark/kernel"

// ToolTable renders the tools as the README's Markdown table
// (kernel.ToolTable); a test compares docs/tools-dns.md with it.
func ToolTable(tools []kernel.Tool) string { return kernel.ToolTable(tools) }
