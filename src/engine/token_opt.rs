//! token-opt/v1: the five token-reduction levers measured in exact cl100k tokens, and TOON encoding.
