package main

import (
	"errors"
	"os"
	"runtime"
	"runtime/pprof"
)

// startProfiles starts a CPU profile into cpuPath and returns a function that stops it
// and writes a heap profile into heapPath; an empty path skips that profile. They show
// where the simulator's own time and memory go at scale (the kubelet simulator above
// all); the operator's are at its --pprof-bind-address.
func startProfiles(cpuPath, heapPath string) (stop func() error, err error) {
	var cpu *os.File
	if cpuPath != "" {
		if cpu, err = os.Create(cpuPath); err != nil {
			return nil, err
		}
		if err := pprof.StartCPUProfile(cpu); err != nil {
			cpu.Close()
			return nil, err
		}
	}
	return func() error {
		var errs []error
		if cpu != nil {
			pprof.StopCPUProfile()
			errs = append(errs, cpu.Close())
		}
		if heapPath != "" {
			errs = append(errs, writeHeapProfile(heapPath))
		}
		return errors.Join(errs...)
	}, nil
}

func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	// Up-to-date statistics: the heap as of the end of the run, not the last GC's.
	runtime.GC()
	return errors.Join(pprof.WriteHeapProfile(f), f.Close())
}
