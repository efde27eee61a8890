package taint_test

import (
	"context"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/internal/taint"
)

// exerciseResources lists the resources and templates, reads each, and on
// 2025-11-25 subscribes to one for a moment (the upstream then says it
// changed).
func exerciseResources(ctx context.Context, cs *mcp.ClientSession) []error {
	var errs []error
	if _, err := cs.ListResources(ctx, nil); err != nil {
		errs = append(errs, err)
	}
	if _, err := cs.ListResourceTemplates(ctx, nil); err != nil {
		errs = append(errs, err)
	}
	for _, uri := range append(taint.Resources, taint.ResourceTemplated) {
		_, _ = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri}) // an error is a finding's business
	}
	if cs.InitializeResult().ProtocolVersion >= "2026-07-28" {
		// a subscription is a subscriptions/listen stream that lasts until
		// it is cancelled, which the HTTP recorder reads to its end
		return errs
	}
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: taint.Resources[0]}); err != nil {
		errs = append(errs, err)
	}
	time.Sleep(200 * time.Millisecond) // the update's way back
	_ = cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: taint.Resources[0]})
	return errs
}
