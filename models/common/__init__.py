"""What the protocol models share: node and transaction basics (`state`), the handler context
(`ctx`), the transaction codec, the `DSEZAB01` dump and the JSON and one-line views of
transactions (`codec`), and the adapter of a model whose variants differ in one `Rules` object
(`model`). A model imports from here, never from another model."""
