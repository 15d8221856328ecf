print("StoreBenchmark: not written yet")
