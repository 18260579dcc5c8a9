//go:build !unix

package storetest

import "time"

// processCPU is not measured on this system: the cpu-ns/op metric reads 0.
func processCPU() time.Duration { return 0 }
