print("PowerBenchmark: not written yet")
