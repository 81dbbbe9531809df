"""Word-embedding agents: the Decrypto benchmark's GloVe baselines (:mod:`.baselines`) and the
offline word-vector loaders they share (:mod:`.vectors`)."""

KINDS = {
    "glove_encoder": "socialsim.agents.embedding.baselines:GloveEncoder",
    "glove_decoder": "socialsim.agents.embedding.baselines:GloveDecoder",
    "glove_interceptor": "socialsim.agents.embedding.baselines:GloveInterceptor",
}
