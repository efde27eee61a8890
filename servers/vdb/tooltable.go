package vdb

import "github.com/bulwarkmcp/bulwark/kernel"

// ToolTable renders the tools as the documentation's Markdown table
// (kernel.ToolTable); a test compares docs/tools-vdb.md with it.
func ToolTable(tools []kernel.Tool) string { return kernel.ToolTable(tools) }
