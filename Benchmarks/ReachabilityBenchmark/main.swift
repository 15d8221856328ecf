print("ReachabilityBenchmark: not written yet")
