"""Evidence scopes besides behaviour: what each published Pi release's documents and type declarations say.

A claim's ledger entry may name a documentation scope (passages the chapter quotes or attributes to a file of the
package, checked verbatim after normalisation) and a declarations scope (the fields the chapter gives a type, read
from the release's `.d.ts` by the TypeScript compiler API). Both are read from the release's published tarball
(`npm pack`), so they are checked even for releases whose packages cannot be installed together. `pinb reference
scopes` writes the results per release to `reference/facts/scopes/`; status, drift and reports read them there.
"""
