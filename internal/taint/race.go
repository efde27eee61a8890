//go:build race

package taint

const race = true
