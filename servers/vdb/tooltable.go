package vdb

import (
	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/tooltable"
)

// ToolTable renders the tools as the documentation's Markdown table
// (kernel/tooltable.Markdown); a test compares docs/tools-vdb.md with it.
func ToolTable(tools []kernel.Tool) string { return tooltable.Markdown(tools) }
