"""Developer tools: random program generator and differential fuzzer."""
