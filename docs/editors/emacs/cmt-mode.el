;;; cmt-mode.el --- Major mode for .cmt files, with the cmtc language server -*- lexical-binding: t -*-

;; Usage, in your init file (Emacs 28 with the eglot package, or Emacs 29
;; and later, where eglot is built in):
;;
;;   (load "/path/to/cmtc/docs/editors/emacs/cmt-mode.el")
;;   (add-hook 'cmt-mode-hook #'eglot-ensure)
;;
;; and, when cmtc is not on `exec-path':
;;
;;   (setq cmt-cmtc-program "/path/to/cmtc/build/cmtc")
;;
;; Opening a .cmt file then starts `cmtc lsp' through eglot: diagnostics
;; through Flymake, hover through ElDoc, M-. (go to definition), imenu,
;; completion (C-M-i), M-x eglot-format-buffer and M-x eglot-code-actions
;; (quick fixes).  The mode itself gives the highlighting, comments and
;; 2-space indentation of `cmtc fmt'.

;;; Code:

(defgroup cmt nil
  "The .cmt language of cmtc."
  :group 'languages)

(defcustom cmt-cmtc-program "cmtc"
  "The cmtc executable; the language server is started as `cmtc lsp'."
  :type 'string)

(defcustom cmt-include-dirs nil
  "Extra module folders, passed to the language server as -I DIR."
  :type '(repeat directory))

(defcustom cmt-indent-offset 2
  "Indentation of a nested block, as `cmtc fmt' lays it out."
  :type 'integer)

(defvar cmt-mode-syntax-table
  (let ((table (make-syntax-table)))
    (modify-syntax-entry ?_ "_" table)
    (modify-syntax-entry ?/ ". 124b" table)
    (modify-syntax-entry ?* ". 23" table)
    (modify-syntax-entry ?\n "> b" table)
    (modify-syntax-entry ?\" "\"" table)
    (modify-syntax-entry ?. "." table)
    (modify-syntax-entry ?? "." table)
    table)
  "Syntax table of `cmt-mode': // and /* */ comments, \"strings\".")

(defconst cmt-font-lock-keywords
  (let ((ident "[A-Za-z_][A-Za-z0-9_]*"))
    `((,(concat "\\_<\\(op\\|arch\\|mapping\\|sweep\\|const\\)\\_>[ \t]+\\(" ident "\\)")
       (1 font-lock-keyword-face) (2 font-lock-function-name-face))
      (,(concat "\\_<\\(memory\\|compute\\|cluster\\)\\_>[ \t]+\\(" ident "\\)")
       (1 font-lock-keyword-face) (2 font-lock-type-face))
      (,(concat "\\_<\\(in\\|out\\|var\\)\\_>[ \t]+\\(" ident "\\)")
       (1 font-lock-keyword-face) (2 font-lock-variable-name-face))
      ("\\_<\\(use\\)\\_>[ \t]+\\([A-Za-z_][A-Za-z0-9_.]*\\)"
       (1 font-lock-keyword-face) (2 font-lock-constant-face))
      (,(regexp-opt '("use" "const" "op" "in" "out" "var" "param" "arch" "memory" "cluster"
                      "compute" "role" "cost" "array" "mapping" "for" "on" "spatial"
                      "tile" "order" "fuse" "at" "overlap" "objective" "online" "repeat" "phase" "recompute" "pipeline" "microbatches" "serve" "sweep" "where" "by" "model")
                    'symbols)
       . font-lock-keyword-face)
      (,(regexp-opt '("matrix" "vector" "ring" "mesh" "torus" "switch" "full" "dragonfly"
                      "hybrid_cube_mesh" "none"
                      "tiles" "local" "input" "weight" "output" "accumulator" "latency" "energy" "edp" "forward" "backward" "train")
                    'symbols)
       . font-lock-constant-face)
      (,(regexp-opt '("int4" "int8" "int16" "int32" "fp8" "bf16" "fp16" "fp32") 'symbols)
       . font-lock-type-face)
      (,(concat (regexp-opt '("exp" "log" "sqrt" "rsqrt" "recip" "abs" "tanh" "sigmoid"
                              "relu" "gelu" "silu" "dgelu" "step" "sign" "eq" "max" "min" "sum" "mean" "top")
                            'symbols)
                "[ \t]*(")
       1 font-lock-builtin-face)
      ("?" . font-lock-warning-face)))
  "Highlighting of `cmt-mode', after the TextMate grammar of the VS Code extension.")

(defun cmt-indent-line ()
  "Indent the current line by the depth of the brackets around it."
  (interactive)
  (let* ((depth (save-excursion
                  (car (syntax-ppss (line-beginning-position)))))
         (closing (save-excursion
                    (back-to-indentation)
                    (looking-at-p "[]})]")))
         (column (* cmt-indent-offset (max 0 (if closing (1- depth) depth)))))
    (if (<= (current-column) (current-indentation))
        (indent-line-to column)
      (save-excursion (indent-line-to column)))))

;;;###autoload
(define-derived-mode cmt-mode prog-mode "CMT"
  "Major mode for .cmt files, read by cmtc.
With `eglot-ensure' on `cmt-mode-hook', the cmtc language server checks
the buffer as you type."
  :syntax-table cmt-mode-syntax-table
  (setq-local comment-start "// ")
  (setq-local comment-end "")
  (setq-local comment-start-skip "\\(?://+\\|/\\*+\\)[ \t]*")
  (setq-local font-lock-defaults '(cmt-font-lock-keywords))
  (setq-local indent-line-function #'cmt-indent-line)
  (setq-local indent-tabs-mode nil)
  (setq-local tab-width 2))

;;;###autoload
(add-to-list 'auto-mode-alist '("\\.cmt\\'" . cmt-mode))

(defun cmt-eglot-contact (&optional _interactive)
  "The command eglot starts for `cmt-mode': cmtc lsp, with `cmt-include-dirs'."
  (append (list cmt-cmtc-program "lsp")
          (apply #'append (mapcar (lambda (dir) (list "-I" (expand-file-name dir)))
                                  cmt-include-dirs))))

(with-eval-after-load 'eglot
  (add-to-list 'eglot-server-programs '(cmt-mode . cmt-eglot-contact)))

(provide 'cmt-mode)
;;; cmt-mode.el ends here
