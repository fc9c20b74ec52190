/** The transpose of a row-major [rows, cols] matrix, blocked for cache locality. */
export function transposeHost(data: Float32Array, rows: number, cols: number): Float32Array {
  const out = new Float32Array(rows * cols);
  const B = 32;
  for (let i0 = 0; i0 < rows; i0 += B) {
    const i1 = Math.min(rows, i0 + B);
    for (let j0 = 0; j0 < cols; j0 += B) {
      const j1 = Math.min(cols, j0 + B);
      for (let i = i0; i < i1; i++) {
        for (let j = j0; j < j1; j++) out[j * rows + i] = data[i * cols + j]!;
      }
    }
  }
  return out;
}
