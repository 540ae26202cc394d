"""Language models and speculative decoding: n-gram and Hugging Face models, speculative sampling,
adaptive drafting policies and the look-ahead decoder."""
